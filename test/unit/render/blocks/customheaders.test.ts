// custom-headers block: the ConfigMap's headers as more_set_headers after the snippets (a later
// more_set_headers wins, as in ingress-nginx), each value one quoted argument with `$` literal.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inOrder, renderLocation } from '../../../support/render-blocks.js';

test('after the configuration-snippet, values literal', () => {
  const text = renderLocation({ customHeaders: { 'X-Frame-Options': 'DENY', 'X-Team': 'a "b" $c' }, configurationSnippet: 'more_set_headers "X-Team: early";' }).locationsText;
  inOrder(text, 'more_set_headers "X-Team: early";', 'more_set_headers "X-Frame-Options: DENY";', 'more_set_headers "X-Team: a \\"b\\" ${literal_dollar}c";', 'proxy_pass');
  assert.not.match(renderLocation({}).locationsText, 'more_set_headers');
});

test('a header name the renderer refuses denies the location', () => {
  assert.equal(renderLocation({ customHeaders: { 'X-A: b\nX': 'c' } }).problems.map((p) => p.field), ['custom-headers']);
});

test.run();
