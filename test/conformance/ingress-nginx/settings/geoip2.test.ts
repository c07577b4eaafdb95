// ingress-nginx test/e2e/settings/geoip2.go, ported. ingress-nginx downloads MaxMind's test
// database (--maxmind-edition-ids); ingress-rx downloads nothing and reads the GeoLite2 databases
// in --geoip-dir, so the test writes two there (test/support/mmdb.ts): 1.1.1.0/24 is AU,
// 8.8.8.0/24 is US. With use-geoip2 NGINX's geoip2 module defines ingress-nginx's variables from
// them; the Its show the variables' values for a client address (X-Forwarded-For with
// use-forwarded-headers), where the e2e test greps nginx.conf for the geoip2 block.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { countryDatabase } from '../../../support/mmdb.js';
import { waitFor } from '../../../support/wait.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'geoip2.test';
const AU = '1.1.1.1';
const US = '8.8.8.8';
const geoipDir = mkdtempSync(join(tmpdir(), 'irx-geoip2-'));

/** use-geoip2, client addresses from X-Forwarded-For, and an access log line naming the variables. */
const GEOIP = {
  'use-geoip2': 'true', 'use-forwarded-headers': 'true',
  'log-format-upstream': 'geo $request_uri country=$geoip2_country_code city_country=$geoip2_city_country_code',
};

test.before(async () => {
  const networks = { '1.1.1.0/24': 'AU', '8.8.8.0/24': 'US' };
  writeFileSync(join(geoipDir, 'GeoLite2-Country.mmdb'), countryDatabase('GeoLite2-Country', networks));
  writeFileSync(join(geoipDir, 'GeoLite2-City.mmdb'), countryDatabase('GeoLite2-City', networks));
  fx = await startFixture('geoip2', { args: ['--geoip-dir', geoipDir], configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('geoip2', HOST)], HOST);
});
test.after(async () => {
  await fx.stop();
  rmSync(geoipDir, { recursive: true, force: true });
});

/** The access log line of a request from `client` to `path` (written when the request ends). */
async function logged(p: ProtocolClient, host: string, path: string, client: string): Promise<string> {
  const start = statSync(fx.accessLog).size;
  assert.is((await p.request(host, path, { headers: { 'X-Forwarded-For': client } })).status, 200);
  return waitFor(() => readFileSync(fx.accessLog).subarray(start).toString('utf8').split('\n').find((l) => l.startsWith(`geo ${path} `)), { what: `the access log line of ${path}` });
}

its.both('settings/geoip2.go:45', async (p) => {
  await fx.configure(GEOIP);
  assert.is(await logged(p, HOST, `/au-${p.tag}`, AU), `geo /au-${p.tag} country=AU city_country=AU`);
  assert.is(await logged(p, HOST, `/us-${p.tag}`, US), `geo /us-${p.tag} country=US city_country=US`);
  assert.is(await logged(p, HOST, `/none-${p.tag}`, '10.1.2.3'), `geo /none-${p.tag} country=- city_country=-`, 'an address the database lacks: empty');
});

its.both('settings/geoip2.go:69', async (p) => {
  // ingress-nginx skips this It ("temporarily disabled"); its behaviour holds here.
  await fx.configure({
    ...GEOIP, 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical',
    'http-snippet': 'map $geoip2_city_country_code $blocked_country {\n  default 1;\n  AU 0;\n}',
  });
  const host = 'only-au.geoip2.test';
  await fx.applyAndWait('only-au.json', [fx.single('only-au', host, { 'configuration-snippet': 'if ($blocked_country) {\n  return 403;\n}' })], host, '/', (r) => r.status === 403);
  // Awaited, not sent once: the last CI run of 2026-11-28 saw one 404 right after the 403 above
  // (a worker without the host; the cause was not established). A host that lets US through, or
  // keeps AU out, still fails.
  assert.is((await p.until(host, '/', (r) => r.status === 403, { headers: { 'X-Forwarded-For': US }, what: 'US refused' })).status, 403);
  assert.is((await p.until(host, '/', (r) => r.status === 200, { headers: { 'X-Forwarded-For': AU }, what: 'AU let through' })).status, 200);
});

its.both('settings/geoip2.go:122', async (p) => {
  // geoip2-autoreload-in-minutes is refused (--geoip-dir is watched; docs/differences.md): it is
  // named in a warning, and NGINX runs and routes with the rest of the ConfigMap.
  await fx.configure({ ...GEOIP, 'geoip2-autoreload-in-minutes': '5' });
  await fx.warned((w) => w.includes('geoip2-autoreload-in-minutes'), 'the refused key is named');
  const host = 'ping.geoip2.test';
  await fx.applyAndWait('ping.json', [fx.single('ping', host)], host);
  assert.is(await logged(p, host, `/ping-${p.tag}`, AU), `geo /ping-${p.tag} country=AU city_country=AU`);
});

test.run();
