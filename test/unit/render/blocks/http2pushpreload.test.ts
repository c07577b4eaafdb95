// http2-push-preload block: http2_push_preload in the proxy slot, only where asked for.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inOrder, renderLocation } from '../../../support/render-blocks.js';

test('http2_push_preload on before proxy_pass; nothing by default', () => {
  inOrder(renderLocation({ http2PushPreload: true }).locationsText, 'http2_push_preload on;', 'proxy_pass');
  assert.not.match(renderLocation({}).locationsText, 'http2_push_preload');
});

test.run();
