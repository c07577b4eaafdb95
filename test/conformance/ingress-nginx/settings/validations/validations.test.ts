// ingress-nginx test/e2e/settings/validations/validations.go, ported against the fake API server
// and the controller's validating webhook (its two Its are the same test): with
// annotations-risk-level Medium an Ingress with Low and Medium annotations (default-backend,
// denylist-source-range) is admitted, and the same Ingress with High ones (modsecurity-*) added
// is refused, naming them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { annotations, configMap, ingressClass, startClusterFixture, type ClusterFixture } from '../../fixture.js';
import { ported } from '../../port.js';
import { ingress, type CliProcess } from '../../../../support/local-harness.js';
import { admissionReview } from '../../../../support/admission-review.js';
import { freePort } from '../../../../support/ports.js';
import { waitFor } from '../../../../support/wait.js';

const NS = 'validations';
const CERTS = new URL('../../../../fixtures/model/_certs/', import.meta.url).pathname;
let cluster: ClusterFixture;
let ctl: CliProcess;
let webhookPort: number;
const its = ported(test, () => ctl);

test.before(async () => {
  cluster = await startClusterFixture();
  cluster.fake.create(ingressClass());
  cluster.echoService(NS);
  cluster.fake.create(configMap(NS, 'ingress-nginx-controller', { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Medium' }));
  webhookPort = await freePort();
  ctl = await cluster.controller([
    `--watch-namespace=${NS}`, `--configmap=${NS}/ingress-nginx-controller`,
    `--validating-webhook=127.0.0.1:${webhookPort}`, `--validating-webhook-certificate=${join(CERTS, 'default.crt')}`, `--validating-webhook-key=${join(CERTS, 'default.key')}`,
  ]);
  // The webhook listens once its store holds the informers' first lists.
  await waitFor(() => review({}).then(() => true, () => null), { timeoutMs: 30_000, what: 'the validating webhook to answer' });
});
test.after(() => cluster.stop());

const LOW_AND_MEDIUM = { 'default-backend': 'bla', 'denylist-source-range': '1.1.1.1/32' };
const review = (a: Record<string, string>) => admissionReview({
  port: webhookPort, ca: readFileSync(join(CERTS, 'default.crt')), namespace: NS,
  object: ingress(NS, 'annotation-validations', { host: 'annotation-validations', className: 'nginx', paths: [{ path: '/', service: 'echo' }], annotations: annotations(a) }),
});

async function riskOnWebhook(): Promise<void> {
  const allowed = await review(LOW_AND_MEDIUM);
  assert.is(allowed.allowed, true, `Low and Medium annotations are admitted: ${allowed.status?.message ?? ''}`);
  const refused = await review({ ...LOW_AND_MEDIUM, 'modsecurity-transaction-id': 'bla123', 'modsecurity-snippet': 'some random stuff;' });
  assert.is(refused.allowed, false, 'High annotations are refused');
  assert.match(refused.status!.message, 'modsecurity-transaction-id');
  assert.match(refused.status!.message, 'modsecurity-snippet');
}

its.noClient('settings/validations/validations.go:33', 'the validating webhook\'s answer', riskOnWebhook);
its.noClient('settings/validations/validations.go:68', 'the validating webhook\'s answer (the e2e file\'s second It is the same test)', riskOnWebhook);

test.run();
