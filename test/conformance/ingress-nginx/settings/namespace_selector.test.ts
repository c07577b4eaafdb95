// ingress-nginx test/e2e/settings/namespace_selector.go, ported against the fake API server: with
// --watch-namespace-selector foo=bar the controller serves the Ingresses of labelled namespaces
// only, and serves those of a namespace once it gets the label. Each protocol's run has its two
// namespaces, as the It labels one of them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ingressClass, startClusterFixture, type ClusterFixture } from '../fixture.js';
import { ported } from '../port.js';
import { ingress, type CliProcess } from '../../../support/local-harness.js';

let cluster: ClusterFixture;
let ctl: CliProcess;
const its = ported(test, () => ctl);

const namespace = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const ingressOf = (ns: string, host: string, labels: Record<string, string> = {}) => {
  const ing = ingress(ns, host, { host, className: 'nginx', paths: [{ path: '/', service: 'echo' }] });
  return { ...ing, metadata: { ...ing.metadata, labels } };
};

test.before(async () => {
  cluster = await startClusterFixture();
  cluster.fake.create(ingressClass());
  for (const tag of ['h1', 'h2']) {
    for (const [ns, labels] of [[`unmatched-${tag}`, {}], [`matched-${tag}`, { foo: 'bar' }]] as const) {
      cluster.fake.create(namespace(ns, labels));
      cluster.echoService(ns);
    }
    cluster.fake.create(ingressOf(`unmatched-${tag}`, `bar.${tag}.test`));
    cluster.fake.create(ingressOf(`matched-${tag}`, `foo.${tag}.test`));
  }
  ctl = await cluster.controller(['--watch-namespace-selector=foo=bar']);
});
test.after(() => cluster.stop());

its.both('settings/namespace_selector.go:62', async (p) => {
  const [unmatched, matched] = [`bar.${p.tag}.test`, `foo.${p.tag}.test`];
  // Both Ingresses were there before the controller started: its first configuration decided both.
  await p.until(matched, '/', (r) => r.status === 200, { what: `${matched} of the labelled namespace` });
  assert.is((await p.request(unmatched, '/')).status, 404, 'the unlabelled namespace\'s Ingress is not served');

  cluster.fake.set(namespace(`unmatched-${p.tag}`, { foo: 'bar' }));
  cluster.fake.set(ingressOf(`unmatched-${p.tag}`, unmatched, { foo: 'bar' }));
  await p.until(unmatched, '/', (r) => r.status === 200, { what: `${unmatched} once its namespace is labelled` });
});

test.run();
