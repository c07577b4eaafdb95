// ingress-nginx test/e2e/settings/disable_catch_all.go, ported against the fake API server: with
// --disable-catch-all an Ingress with a spec.defaultBackend is not served at all, rules or not
// (the default server keeps answering unknown hosts with its 404), also when a served Ingress is
// changed into one; Ingresses with rules only are served.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ingressClass, startClusterFixture, type ClusterFixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, type CliProcess } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';

const NS = 'disable-catch-all';
let cluster: ClusterFixture;
let ctl: CliProcess;
const its = ported(test, () => ctl);

test.before(async () => {
  cluster = await startClusterFixture();
  cluster.fake.create(ingressClass());
  cluster.echoService(NS);
  ctl = await cluster.controller([`--watch-namespace=${NS}`, '--disable-catch-all=true']);
});
test.after(() => cluster.stop());

const ECHO = { service: 'echo', port: 80 };
const withRules = (name: string, host: string, o: { defaultBackend?: typeof ECHO } = {}) =>
  ingress(NS, name, { host, className: 'nginx', paths: [{ path: '/', service: 'echo' }], ...o });
const catchAll = (name: string) => ingress(NS, name, { className: 'nginx', defaultBackend: ECHO });

/** The default server's answer to a host no Ingress names: its own 404, not the echo Service. */
async function defaultServerAnswers(p: ProtocolClient): Promise<void> {
  const r = await p.request(`unknown.${p.tag}.disable-catch-all.test`, '/');
  assert.is(r.status, 404);
  assert.is(r.backend, undefined, 'no catch-all Ingress answers');
}

its.both('settings/disable_catch_all.go:50', async (p) => {
  const host = `foo.${p.tag}.test`;
  cluster.fake.set(catchAll(`catch-all-${p.tag}`));
  cluster.fake.set(withRules(host, host));
  await p.until(host, '/', (r) => r.status === 200, { what: host });
  await defaultServerAnswers(p);
});

its.both('settings/disable_catch_all.go:69', async (p) => {
  const host = `foo-rules.${p.tag}.test`;
  cluster.fake.set(withRules(host, host, { defaultBackend: ECHO }));
  // Written after it: once this serves, the controller has read the catch-all too.
  const marker = `marker-rules.${p.tag}.test`;
  cluster.fake.set(withRules(marker, marker));
  await p.until(marker, '/', (r) => r.status === 200, { what: marker });
  await defaultServerAnswers(p);
  assert.is((await p.request(host, '/')).status, 404, 'its rules are not served either');
});

its.both('settings/disable_catch_all.go:81', async (p) => {
  const host = `foo-updated.${p.tag}.test`;
  cluster.fake.set(withRules(host, host));
  await p.until(host, '/', (r) => r.status === 200, { what: host });
  cluster.fake.set(catchAll(host));
  await p.until(host, '/', (r) => r.status === 404, { what: `${host} once a catch-all` });
  await defaultServerAnswers(p);
});

its.both('settings/disable_catch_all.go:123', async (p) => {
  const host = `not-catch-all.${p.tag}.test`;
  cluster.fake.set(withRules('not-catch-all', host));
  await p.until(host, '/', (r) => r.status === 200 && r.backend !== undefined, { what: host });
});

test.run();
