// Every rendered configuration passes the real `nginx -t` with our Lua modules: the golden
// configurations, every accepted hostile value, and use-geoip2 without databases.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createNginxHarness, type NginxHarness } from '../../support/nginx-harness.js';
import { configuration, goldenConfigurations, hostileBase, HOSTILE_FIELDS, server } from '../../support/config-builder.js';
import { HOSTILE_VALUES } from '../../support/hostile.js';

let h: NginxHarness;

test.before(async () => {
  h = await createNginxHarness();
});
test.after(async () => {
  await h.close();
});

for (const [name, cfg] of Object.entries(goldenConfigurations())) {
  test(`nginx -t accepts the ${name} configuration`, async () => {
    const r = await h.test(h.renderer.render(cfg, h.runtime));
    assert.ok(r.ok, r.output);
  });
}

test('nginx -t accepts every hostile value the renderer lets through', async () => {
  // One configuration per hostile value, holding every field that accepted it on its own server.
  const checks: Array<{ name: string; accepted: number; text: string }> = [];
  for (const hv of HOSTILE_VALUES) {
    let combined = hostileBase('base.example.com');
    let accepted = 0;
    for (const [i, fld] of HOSTILE_FIELDS.entries()) {
      const probe = hostileBase(`f${i}.example.com`);
      fld.set(probe, `${fld.prefix ?? ''}${hv.value}`);
      try {
        // A value the renderer refuses denies its location or leaves its server out (a problem).
        if (h.renderer.renderWithWarnings(probe, h.runtime).problems.length > 0) continue;
      } catch {
        continue;
      }
      accepted++;
      const mine = probe.servers.find((s) => s.hostname === `f${i}.example.com`);
      const tcp = probe.tcpEndpoints.length ? probe.tcpEndpoints : combined.tcpEndpoints;
      combined = { ...combined, servers: mine ? [...combined.servers, mine] : combined.servers, settings: { ...combined.settings, ...diff(probe.settings, hostileBase().settings) }, tcpEndpoints: tcp };
    }
    checks.push({ name: hv.name, accepted, text: h.renderer.render(combined, h.runtime) });
  }
  // Two nginx -t at a time: the machine has two cores.
  for (let i = 0; i < checks.length; i += 2) {
    const batch = checks.slice(i, i + 2);
    const results = await Promise.all(batch.map((c) => h.test(c.text)));
    results.forEach((r, j) => assert.ok(r.ok, `${batch[j]!.name} (${batch[j]!.accepted} fields accepted it): ${r.output}`));
  }
});

test('Lua header filter set once per server: a server-snippet with its own replaces it, one with log_by_lua keeps it; nginx -t passes', async () => {
  const cfg = configuration([
    server('own.example.com', { serverSnippet: 'header_filter_by_lua_block { ngx.header["X-Own"] = "1" }' }),
    server('logs.example.com', { serverSnippet: 'log_by_lua_block { ngx.log(ngx.INFO, "own") }' }),
    server('plain.example.com'),
  ]);
  const text = h.renderer.render(cfg, h.runtime);
  const block = (host: string) => text.slice(text.indexOf(`## start server ${host}`), text.indexOf(`## end server ${host}`));
  assert.not.ok(block('own.example.com').includes('balancer.header_filter()'));
  assert.ok(block('logs.example.com').includes('lua_ingress.header("logs.example.com")'));
  const plain = block('plain.example.com');
  assert.ok(plain.includes('balancer.header_filter()') && plain.includes('lua_ingress.header("plain.example.com")'), plain);
  assert.not.ok(plain.includes('log_by_lua'), 'the EWMA learns in the header filter: no log phase');
  const r = await h.test(text);
  assert.ok(r.ok, r.output);
});

test('use-geoip2 without databases: a warning, no geoip2 directives, and nginx -t passes', async () => {
  const r = h.renderer.renderWithWarnings(configuration([server('geo.example.com')], {}, { useGeoip2: true }), h.runtime);
  assert.ok(r.warnings.some((w) => w.includes('GeoLite2')), r.warnings.join('\n'));
  assert.not.ok(r.text.includes('geoip2'));
  const t = await h.test(r.text);
  assert.ok(t.ok, t.output);
});

function diff<T extends object>(a: T, b: T): Partial<T> {
  const out: Partial<T> = {};
  for (const k of Object.keys(a) as (keyof T)[]) if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) out[k] = a[k];
  return out;
}

test.run();
