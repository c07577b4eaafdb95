// default-backend block: the Lua rewrite phase is given the annotation's backend, where the
// request goes while the location's own backend has no endpoint.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderLocation } from '../../../support/render-blocks.js';

test('balancer.rewrite gets the default backend after the location backend', () => {
  assert.match(renderLocation({ defaultBackend: 'custom-default-backend-default-errors' }).locationsText,
    'balancer.rewrite("default-web-80", "custom-default-backend-default-errors")');
  assert.match(renderLocation({}).locationsText, 'balancer.rewrite("default-web-80")\n');
});

test('with a configuration-snippet the backend is left to the snippet, the default backend still given', () => {
  const text = renderLocation({ defaultBackend: 'custom-default-backend-default-errors', configurationSnippet: 'set $x 1;' }).locationsText;
  assert.match(text, 'balancer.rewrite(nil, "custom-default-backend-default-errors")');
});

test.run();
