// The location frame prints the text of the settings slots once per shared settings object
// (src/render/location.ts): locations holding one settings object still print what is their
// own (a rate-limit zone, an auth location named by the location's id), and what follows from
// the settings alone comes out the same as rendered per location.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultSettings } from '../../../src/model/core/config/defaults.js';
import { serverView } from '../../../src/render/view.js';
import { defaultAnnotations } from '../../../src/model/ingress/annotations/index.js';
import { location, proxyDefaults, server } from '../../support/config-builder.js';
import { RUNTIME } from '../../support/render-blocks.js';

const block = (text: string, path: string): string => {
  const at = text.indexOf(`location "${path}"`);
  assert.ok(at >= 0, `no location ${path}`);
  return text.slice(at, text.indexOf('\n        }\n', at));
};

test('locations sharing one settings object: per-location names stay per location, the settings text is the same', () => {
  const first = location({
    path: '/a', pathType: 'Prefix',
    rateLimit: { rps: 10, rpm: 0, connections: 0, burstMultiplier: 5, limitRate: 0, limitRateAfter: 0, allowlist: [] },
    externalAuth: { url: 'http://127.0.0.1:9/auth', host: '', method: 'GET', signin: '', signinRedirectParam: 'rd', responseHeaders: [], cacheKey: '', cacheDuration: [], requestRedirect: '', alwaysSetCookie: false, snippet: '', proxySetHeaders: {}, keepalive: null },
    proxy: { ...proxyDefaults(), readTimeout: 120, bodySize: '8m' },
  });
  const second = { ...first, path: '/b' };
  const third = { ...first, path: '/c' };
  assert.ok(first.settings === second.settings && second.settings === third.settings);
  const view = serverView(server('app.example.com', { locations: [first, second, third] }), { settings: defaultSettings(), runtime: RUNTIME, wwwRedirectFrom: null });
  const [a, b, c] = ['/a', '/b', '/c'].map((p) => block(view.locationsText, p));
  const zone = (text: string) => /limit_req zone=(\S+)/.exec(text)?.[1];
  const auth = (text: string) => /auth_request "?([^";]+)/.exec(text)?.[1];
  assert.ok(zone(a) && zone(b) && zone(c), a);
  assert.equal(new Set([zone(a), zone(b), zone(c)]).size, 3, 'one rate-limit zone per location');
  assert.equal(new Set([auth(a), auth(b), auth(c)]).size, 3, 'one auth location per location');
  for (const t of [a, b, c]) {
    assert.match(t, 'proxy_read_timeout 120s;');
    assert.match(t, 'client_max_body_size 8m;');
  }
  // The same locations, each with a settings object of its own, print the same text.
  const own = [first, second, third].map((l) => ({ ...l, settings: { ...l.settings } }));
  const alone = serverView(server('app.example.com', { locations: own }), { settings: defaultSettings(), runtime: RUNTIME, wwwRedirectFrom: null });
  assert.is(alone.locationsText, view.locationsText);
  assert.is(alone.extra, view.extra);
});

test('a slot whose blocks read the location only in part: each block prints in its place, the per-location one with the location\'s own values', () => {
  const d = defaultAnnotations(defaultSettings());
  const first = location({ path: '/a', pathType: 'Prefix', rewrite: { ...d.rewrite, target: '/' }, customHttpErrors: [503] });
  const second = { ...first, path: '/b' };
  assert.ok(first.settings === second.settings);
  const view = serverView(server('app.example.com', { locations: [first, second] }), { settings: defaultSettings(), runtime: RUNTIME, wwwRedirectFrom: null });
  for (const p of ['/a', '/b']) {
    const text = block(view.locationsText, p);
    const errorPage = text.indexOf('error_page 503 = @custom_');
    const rewrite = text.indexOf(`rewrite "(?i)^${p}" "/" break;`);
    assert.ok(errorPage > 0 && rewrite > errorPage, text);
    assert.not.match(text, `rewrite "(?i)^${p === '/a' ? '/b' : '/a'}"`);
  }
});

test.run();
