// What the servers ask of the http and stream levels (ModSecurity's module and Core Rule Set,
// tracing, stream-snippets) is memoised per Server object and settings: one renderer, reused
// across configurations as the reload actor does, must follow a server that changes, a server
// that goes back, and settings that change under the same Server objects; and an unchanged
// server's locations are not read again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRenderer } from '../../../src/render/engine.js';
import { createHttpUsesMemo } from '../../../src/render/http-uses.js';
import { DEFAULT_TEMPLATE_DIR, defaultRuntime } from '../../../src/render/runtime.js';
import { defaultSettings } from '../../../src/model/core/config/parse.js';
import type { Server } from '../../../src/model/core/types.js';
import type { NginxSettings } from '../../../src/model/core/config/settings.js';
import { silentLogger } from '../../../src/log.js';
import { configuration, location, server } from '../../support/config-builder.js';

const rt = defaultRuntime({ prefix: '/tmp/irx-http-uses-unit' });
const modsec = { enable: null, owaspRules: false, transactionId: '', rules: [] };
const plain = server('a.example.com', { locations: [location()] });
const other = server('b.example.com', { locations: [location({ path: '/api' })] });
const asking = server('b.example.com', {
  locations: [location({
    path: '/api', modsecurity: { ...modsec, enable: true }, opentelemetry: { enable: true, trust: null, operationName: '' },
    streamSnippet: 'server { listen 127.0.0.1:19999; return ok; }', ingress: { namespace: 'team', name: 'web' },
  })],
});
// Asks for the Core Rule Set when the ConfigMap turns ModSecurity on and does not load it for everyone.
const crsInherit = server('c.example.com', { locations: [location({ modsecurity: { ...modsec, owaspRules: true } })] });

test('one renderer follows a server that changes and one that goes back', () => {
  const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() });
  const before = renderer.render(configuration([plain, other]), rt);
  assert.not.match(before, /modsecurity|opentelemetry|stream-snippet/);
  const changed = renderer.render(configuration([plain, asking]), rt);
  assert.match(changed, /load_module "[^"]*ngx_http_modsecurity_module\.so";/);
  assert.match(changed, "opentelemetry.configure({");
  assert.match(changed, '# stream-snippet of team/web\n    server { listen 127.0.0.1:19999; return ok; }');
  const back = renderer.render(configuration([plain, other]), rt);
  assert.equal(back, before);
});

test('the same Server objects under new settings: the Core Rule Set follows the ConfigMap', () => {
  const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() });
  const crsLine = /# The Core Rule Set for the locations that ask for it/;
  assert.not.match(renderer.render(configuration([plain, crsInherit]), rt), crsLine);
  assert.match(renderer.render(configuration([plain, crsInherit], {}, { enableModsecurity: true }), rt), crsLine);
  // Given to everyone by the ConfigMap: no location asks for it itself.
  assert.not.match(renderer.render(configuration([plain, crsInherit], {}, { enableModsecurity: true, enableOwaspModsecurityCrs: true }), rt), crsLine);
});

test("an unchanged server's locations are read once per settings", () => {
  let reads = 0;
  const counted = (s: Server): Server => {
    const { locations, ...rest } = s;
    return Object.defineProperty({ ...rest }, 'locations', { get: () => { reads++; return locations; }, enumerable: true }) as Server;
  };
  const srv = counted(asking);
  const usesOf = createHttpUsesMemo();
  const s1 = defaultSettings();
  const first = usesOf(srv, s1);
  const afterFirst = reads;
  assert.ok(afterFirst > 0);
  assert.equal(usesOf(srv, s1), first);
  assert.equal(reads, afterFirst);
  assert.equal(first, { modsecurity: { load: true, crs: false }, traced: true, streamSnippets: [{ ingress: 'team/web', snippet: 'server { listen 127.0.0.1:19999; return ok; }' }] });
  const s2: NginxSettings = { ...s1, enableModsecurity: true };
  usesOf(srv, s2);
  assert.ok(reads > afterFirst);
});

test("an Ingress's stream-snippet is printed once over its servers; a refused one is left out, naming its Ingress", () => {
  const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() });
  const snippet = 'server { listen 127.0.0.1:19998; return ok; }';
  const ofWeb = (host: string) => server(host, { locations: [location({ streamSnippet: snippet, ingress: { namespace: 'team', name: 'web' } })] });
  const bad = server('d.example.com', { locations: [location({ streamSnippet: 'location / { }', ingress: { namespace: 'team', name: 'bad' } })] });
  const r = renderer.renderWithWarnings(configuration([ofWeb('a.example.com'), ofWeb('e.example.com'), bad]), rt);
  assert.is(r.text.split('# stream-snippet of team/web').length, 2);
  assert.not.match(r.text, 'location / { }');
  assert.equal(r.problems.filter((p) => p.field === 'stream-snippet').map((p) => [p.ingresses, p.outcome]), [[[{ namespace: 'team', name: 'bad' }], 'stream-snippet left out']]);
});

test.run();
