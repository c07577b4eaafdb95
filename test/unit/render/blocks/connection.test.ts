// connection block: the Connection header sent upstream, inside the standard set.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderLocation } from '../../../support/render-blocks.js';

test('Connection is the annotation value; Upgrade and the rest of the set stay', () => {
  const text = renderLocation({ connectionHeader: 'keep-alive' }).locationsText;
  assert.match(text, 'proxy_set_header Connection "keep-alive";');
  assert.match(text, 'proxy_set_header Upgrade $http_upgrade;');
  assert.not.match(text, '$connection_upgrade');
});

test.run();
