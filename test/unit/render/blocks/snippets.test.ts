// snippets block: configuration-snippet last in the location, server-snippet in the server; a
// snippet takes over what it may set (headers, the backend, the header filter).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inOrder, renderLocation } from '../../../support/render-blocks.js';

test('configuration-snippet last before the pass; one that sets headers makes the location print the set', () => {
  const text = renderLocation({ configurationSnippet: 'more_set_headers "X-A: b";' }).locationsText;
  inOrder(text, 'balancer.rewrite()', '# configuration-snippet', 'more_set_headers "X-A: b";', 'proxy_pass');
  assert.not.match(text, 'proxy_set_header');
  assert.match(renderLocation({ configurationSnippet: 'proxy_set_header X-A b;' }).locationsText, 'proxy_set_header Host $this_host;');
});

test('server-snippet in the server; one that sets the header filter replaces the server\'s; a refused one is left out, named', () => {
  const view = renderLocation({}, { server: { serverSnippet: 'location = /ping { return 200; }' } });
  assert.match(view.directives, '# server-snippet\n        location = /ping { return 200; }');
  assert.match(view.luaPhases, 'header_filter_by_lua_block');
  const own = renderLocation({}, { server: { serverSnippet: 'header_filter_by_lua_block { ngx.header["X"] = "1" }' } });
  assert.is(own.luaPhases, '');
  const refused = renderLocation({}, { server: { serverSnippet: '} server { listen 81;' } });
  assert.is(refused.directives, '');
  assert.equal(refused.problems.map((p) => [p.field, p.outcome]), [['server-snippet', 'server-snippet left out']]);
  assert.match(refused.locationsText, 'proxy_pass');
});

test('the ConfigMap\'s location-snippet and server-snippet in every location and server, after the Ingress\'s own', () => {
  const view = renderLocation({ configurationSnippet: 'add_header X-Own 1;' }, { settings: { locationSnippet: 'add_header X-Cm 1;', serverSnippet: 'location = /cm { return 204; }' } });
  inOrder(view.locationsText, 'add_header X-Own 1;', '# location-snippet (ConfigMap)', 'add_header X-Cm 1;');
  assert.match(view.directives, '# server-snippet (ConfigMap)');
  assert.match(view.directives, 'location = /cm { return 204; }');
});

test.run();
