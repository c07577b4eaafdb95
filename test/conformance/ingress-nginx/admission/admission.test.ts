// ingress-nginx test/e2e/admission/admission.go, ported: `ingress-rx controller` against the fake
// API server with its validating webhook on loopback. Each It sends the AdmissionReview the API
// server would send for the Ingress the e2e test creates (the fake API server does not call
// webhooks) and reads the webhook's answer; an Ingress allowed is then created and, where the It
// says so, served. admission.go:133 (a path `/etc/nginx` refused) is set aside in
// dispositions.ts: ingress-rx serves the path and warns. The main ConfigMap holds what the Its set (a word blocklist, strict path
// types, snippets allowed); each It has hosts of its own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect as tlsConnect } from 'node:tls';
import { ported } from '../port.js';
import type { FakeApiServer } from '../../../support/fake-apiserver.js';
import { ingress, type CliProcess } from '../../../support/local-harness.js';
import { echoService, NGINX_CLASS, startClusterController, WEBHOOK_CA as CA, type ClusterController } from '../../../support/cluster-controller.js';
import { waitFor } from '../../../support/wait.js';
import { postToWebhook } from '../../../support/admission-review.js';

const NS = 'admission';
const WHY = "the webhook's answer to a review";
let cluster: ClusterController | undefined;
let fake: FakeApiServer;
let ctl: CliProcess;
let webhookPort: number;
const its = ported(test, () => ctl);

test.before(async () => {
  cluster = await startClusterController({
    echo: ['echo', 'slow-echo'].map((name, i) => ({ address: `127.0.34.${10 + i}`, name })),
    webhook: true,
    objects: ({ echo }) => [NGINX_CLASS, ...echo.flatMap((e) => echoService(NS, e.name, [e])), {
      apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ingress-nginx-controller', namespace: NS },
      data: {
        // admission.go:167 and :181 each set one word; one list holds both.
        'annotation-value-word-blocklist': '},set_by_lua',
        'strict-validate-path-type': 'true',
        'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical',
      },
    }],
    flags: ['--election-id=irx-conformance-admission', '--allow-upstream-addresses=loopback', `--configmap=${NS}/ingress-nginx-controller`],
    env: { POD_NAMESPACE: NS },
  });
  ({ fake, ctl, webhookPort } = cluster);
  // The webhook answers 503 until its store holds the cluster.
  await waitFor(async () => (await review(ingress(NS, 'probe', { host: 'probe.test', className: 'nginx', paths: [{ path: '/', service: 'echo' }] }))).status === 200, { what: 'the webhook reviewing' });
});
test.after(() => cluster?.stop());

interface Answer { status: number; allowed?: boolean; message: string }

async function post(body: string | Buffer): Promise<Answer> {
  const { status, json, text } = await postToWebhook(webhookPort, body, { ca: CA, timeoutMs: 30_000 });
  const response = (json as { response?: { allowed?: boolean; status?: { message?: string } } } | undefined)?.response;
  return { status, allowed: response?.allowed, message: response?.status?.message ?? text };
}

let uid = 0;
/** The review the API server sends for creating `object`. */
function review(object: { metadata: { name: string; namespace?: string } }): Promise<Answer> {
  uid += 1;
  return post(JSON.stringify({
    kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1',
    request: {
      uid: `review-${uid}`, operation: 'CREATE', name: object.metadata.name, namespace: NS,
      kind: { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress' },
      resource: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses' },
      userInfo: { username: 'kubernetes-admin' }, object,
    },
  }));
}

/** Creates `object` as the API server would once the webhook allowed it. */
async function create(object: { metadata: { name: string } }): Promise<void> {
  const a = await review(object);
  assert.ok(a.allowed, `${object.metadata.name} allowed: ${a.message}`);
  fake.create(object as never);
}

const single = (name: string, host: string, paths: string[], opts: { annotations?: Record<string, string>; svc?: string; pathType?: string; className?: string } = {}) => ingress(NS, name, {
  host, className: opts.className ?? 'nginx', annotations: opts.annotations,
  paths: paths.map((path) => ({ path, service: opts.svc ?? 'echo', pathType: opts.pathType })),
});

async function denied(object: { metadata: { name: string } }, what: string): Promise<string> {
  const a = await review(object);
  assert.is(a.status, 200);
  assert.is(a.allowed, false, `${what}: ${a.message}`);
  return a.message;
}

its.noClient('admission/admission.go:47', WHY, async () => {
  // A review announcing a 9 MiB body, as ingress-nginx's test posts. The webhook answers on the
  // headers, without reading the body, and closes: the client sends the headers and reads the
  // answer (one still writing the body may see the connection reset before the answer instead).
  const answer = await new Promise<string>((resolve) => {
    let got = '';
    const s = tlsConnect({ host: '127.0.0.1', port: webhookPort, ca: CA, servername: 'ingress.local' }, () => {
      s.write(`POST /networking/v1/ingresses HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: ${9 * 1024 * 1024}\r\n\r\n`);
    });
    s.setTimeout(10_000, () => s.destroy());
    s.on('data', (d: Buffer) => { got += d.toString('utf8'); });
    s.on('error', () => resolve(got));
    s.on('close', () => resolve(got));
  });
  assert.match(answer, /^HTTP\/1\.1 413 /, JSON.stringify(answer));
});

its.noClient('admission/admission.go:64', WHY, async () => {
  const host = 'overlap.admission.test';
  await create(single('first-ingress', host, ['/']));
  await ctl.until(host, '/', (r) => r.status === 200, { what: `${host} served` });
  const message = await denied(single('second-ingress', host, ['/']), 'the same host and path');
  assert.match(message, 'first-ingress');
});

its.noClient('admission/admission.go:81', WHY, async () => {
  const host = 'overlap-any-rule.admission.test';
  await create(single('first-multi', host, ['/safe-path-1', '/conflict-path']));
  await ctl.until(host, '/safe-path-1', (r) => r.status === 200, { what: `${host} served` });
  const message = await denied(single('second-multi', host, ['/safe-path-2', '/conflict-path']), 'one path of another Ingress');
  assert.match(message, '/conflict-path');
});

its.noClient('admission/admission.go:112', WHY, async () => {
  const host = 'canary.admission.test';
  await create(single('first-canary', host, ['/']));
  await ctl.until(host, '/', (r) => r.status === 200, { what: `${host} served` });
  await create(single('second-canary', host, ['/'], { svc: 'slow-echo', annotations: { 'nginx.ingress.kubernetes.io/canary': 'true', 'nginx.ingress.kubernetes.io/canary-by-header': 'CanaryByHeader' } }));
});

its.noClient('admission/admission.go:152', WHY, async () => {
  await denied(single('invalid-snippet', 'snippet.admission.test', ['/'], { annotations: { 'nginx.ingress.kubernetes.io/configuration-snippet': 'something invalid' } }), 'a snippet NGINX refuses');
});

its.noClient('admission/admission.go:167', WHY, async () => {
  const message = await denied(single('blocked-brace', 'brace.admission.test', ['/'], { annotations: { 'nginx.ingress.kubernetes.io/connection-proxy-header': 'a;}' } }), 'a blocklisted word');
  assert.match(message, 'connection-proxy-header');
});

its.noClient('admission/admission.go:181', WHY, async () => {
  const message = await denied(single('blocked-lua', 'lua.admission.test', ['/'], { annotations: { 'nginx.ingress.kubernetes.io/connection-proxy-header': 'set_by_lua' } }), 'a blocklisted word');
  assert.match(message, 'set_by_lua');
});

its.noClient('admission/admission.go:195', WHY, async () => {
  const host = 'path-validation';
  await denied(single('first-exact', host, ['/foo/bar/[a-z]{3}'], { pathType: 'Exact' }), 'a regex as an Exact path');
  await denied(single('first-prefix', host, ['/foo/bar/[a-z]{3}'], { pathType: 'Prefix' }), 'a regex as a Prefix path');
  await create(single('pathspec-ingress', host, ['/foo/bar/[a-z]{3}'], { pathType: 'ImplementationSpecific', annotations: { 'nginx.ingress.kubernetes.io/use-regex': 'true', 'nginx.ingress.kubernetes.io/rewrite-target': '/new/backend' } }));
  await create(single('second-valid', host, ['/bloblo']));
});

its.both('admission/admission.go:229', async (p) => {
  if (p.protocol === 'HTTP/1.1') await create(single('extensions', 'extensions', ['/']));
  await p.until('extensions', '/', (r) => r.status === 200 && r.backend === 'echo', { what: 'extensions served' });
});

its.both('admission/admission.go:245', async (p) => {
  if (p.protocol === 'HTTP/1.1') await create(single('extensions-class', 'extensions-class', ['/'], { className: '', annotations: { 'kubernetes.io/ingress.class': 'nginx' } }));
  await p.until('extensions-class', '/', (r) => r.status === 200 && r.backend === 'echo', { what: 'extensions-class served' });
});

its.noClient('admission/admission.go:263', WHY, async () => {
  await denied(single('extensions-invalid', 'extensions-invalid', ['/'], { annotations: { 'nginx.ingress.kubernetes.io/configuration-snippet': 'invalid directive\n' } }), 'a snippet NGINX refuses');
});

its.noClient('admission/admission.go:278', WHY, async () => {
  const a = await review(single('extensions-invalid-other', 'extensions-invalid', ['/'], { className: 'nginx-other', annotations: { 'nginx.ingress.kubernetes.io/configuration-snippet': 'invalid directive\n' } }));
  assert.is(a.allowed, true, a.message);
});

test.run();
