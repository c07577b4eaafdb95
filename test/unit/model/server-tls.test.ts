// A host's TLS settings from its Ingresses (model/server-tls.ts) through the model builder: the
// oldest Ingress that sets client authentication or ciphers gives the host's, a newer one asking
// for other client-certificate settings is told so, and the Secrets they name (and the one
// ssl-dh-param names) make the store re-sync when they change.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { createModelBuilder } from '../../../src/model/build.js';
import type { ConfigMap, Secret } from '../../../src/store/kube-types.js';
import { ingress, PREFIX, service, slice, testStore, tlsSecret } from '../../support/model-objects.js';
import { readFileSync } from 'node:fs';

const NOW = new Date('2026-11-22T00:00:00Z');
const CA = execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', '/dev/null', '-days', '1', '-subj', '/CN=ca'], { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
const caSecret = (name: string, ns = 'default'): Secret => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, data: { 'ca.crt': Buffer.from(CA).toString('base64') } });

function build(store: ReturnType<typeof testStore>) {
  return createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW }).build(store);
}

test('the oldest Ingress gives the host its client authentication and ciphers; a newer one with other settings is warned', () => {
  const store = testStore();
  store.put('Service', service('web'));
  store.put('EndpointSlice', slice('web-1', 'web', ['10.0.0.1']));
  store.put('Secret', caSecret('ca'));
  store.put('Ingress', ingress('old', 'a.example.com', [['/', 'Prefix', 'web', 80]], { ts: '2026-01-01T00:00:00Z', annotations: { 'auth-tls-secret': 'ca', 'ssl-ciphers': 'ECDHE-ECDSA-AES128-GCM-SHA256' } }));
  store.put('Ingress', ingress('new', 'a.example.com', [['/new', 'Prefix', 'web', 80]], { ts: '2026-02-01T00:00:00Z', annotations: { 'auth-tls-secret': 'ca', 'auth-tls-verify-client': 'optional', 'ssl-ciphers': 'HIGH' } }));
  store.put('Ingress', ingress('other', 'b.example.com', [['/', 'Prefix', 'web', 80]]));
  const { config, warnings } = build(store);
  const a = config.servers.find((s) => s.hostname === 'a.example.com')!;
  const t = a.tlsSettings!;
  assert.equal([t.authTLS && 'verifyClient' in t.authTLS ? t.authTLS.verifyClient : t.authTLS, t.sslCiphers, t.proxySSL], ['on', 'ECDHE-ECDSA-AES128-GCM-SHA256', null]);
  assert.ok(warnings.some((w) => w.object === 'Ingress default/new' && /already takes its client-certificate settings .* default\/old/.test(w.message)), JSON.stringify(warnings));
  assert.is(config.servers.find((s) => s.hostname === 'b.example.com')!.tlsSettings, undefined);
});

test('unusable client authentication closes the host only when the oldest Ingress asks for it; a newer one closes its own paths', () => {
  const store = testStore();
  store.put('Service', service('web'));
  store.put('EndpointSlice', slice('web-1', 'web', ['10.0.0.1']));
  store.put('Ingress', ingress('owner', 'a.example.com', [['/', 'Prefix', 'web', 80]], { ts: '2026-01-01T00:00:00Z' }));
  store.put('Ingress', ingress('late', 'a.example.com', [['/late', 'Prefix', 'web', 80]], { ts: '2026-02-01T00:00:00Z', annotations: { 'auth-tls-secret': 'missing' } }));
  store.put('Ingress', ingress('first', 'b.example.com', [['/', 'Prefix', 'web', 80]], { ts: '2026-01-01T00:00:00Z', annotations: { 'auth-tls-secret': 'missing' } }));
  store.put('Ingress', ingress('second', 'b.example.com', [['/two', 'Prefix', 'web', 80]], { ts: '2026-02-01T00:00:00Z' }));
  const { config, warnings } = build(store);
  const a = config.servers.find((s) => s.hostname === 'a.example.com')!;
  assert.is(a.tlsSettings?.authTLS ?? null, null, 'the newer Ingress does not set the host\'s client authentication');
  const of = (name: string) => a.locations.filter((l) => l.ingress?.name === name);
  assert.ok(of('owner').length > 0 && of('owner').every((l) => l.denied === null), 'the owner\'s paths keep serving');
  assert.ok(of('late').length > 0 && of('late').every((l) => /auth-tls-secret/.test(l.denied ?? '')), JSON.stringify(of('late').map((l) => l.denied)));
  assert.ok(warnings.some((w) => w.object === 'Ingress default/late' && /paths on host a\.example\.com are closed/.test(w.message)), JSON.stringify(warnings));
  // The host's oldest Ingress asks for it: the whole host stays closed (fail closed).
  const b = config.servers.find((s) => s.hostname === 'b.example.com')!;
  assert.ok(b.tlsSettings?.authTLS && 'error' in b.tlsSettings.authTLS);
});

test('a Secret an auth-tls / proxy-ssl annotation or ssl-dh-param names is relevant to the store; others are not', () => {
  const store = testStore({ configmap: 'ingress-nginx/config' });
  store.put('Service', service('web'));
  store.put('Ingress', ingress('mtls', 'a.example.com', [['/', 'Prefix', 'web', 80]], { annotations: { 'auth-tls-secret': 'client-ca', 'proxy-ssl-secret': 'default/backend-ca' } }));
  const configMap: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'config', namespace: 'ingress-nginx' }, data: { 'ssl-dh-param': 'ingress-nginx/dh' } };
  store.put('ConfigMap', configMap);
  const relevant = (s: Secret) => store.apply({ kind: 'Secret', type: 'add', key: `${s.metadata.namespace}/${s.metadata.name}`, object: s }).relevant;
  assert.is(relevant(caSecret('client-ca')), true);
  assert.is(relevant(caSecret('backend-ca')), true);
  assert.is(relevant(caSecret('dh', 'ingress-nginx')), true);
  assert.is(relevant(caSecret('unrelated')), false);
});

test('a TLS Secret with a 5 MB chain is refused by name: its host keeps the default certificate, the other hosts their own', () => {
  const pem = (f: string) => readFileSync(new URL(`../../fixtures/model/_certs/${f}`, import.meta.url), 'utf8');
  const crt = pem('tls.crt');
  const store = testStore();
  store.put('Service', service('web'));
  store.put('EndpointSlice', slice('web-1', 'web', ['10.0.0.1']));
  // A real certificate followed by copies of itself as a "chain", 5 MB in all.
  store.put('Secret', tlsSecret('huge', crt + crt.repeat(Math.ceil(5 * 1024 * 1024 / crt.length)), pem('tls.key')));
  store.put('Secret', tlsSecret('good', crt, pem('tls.key')));
  store.put('Ingress', ingress('huge', 'tls.example.com', [['/', 'Prefix', 'web', 80]], { tls: [{ hosts: ['tls.example.com'], secretName: 'huge' }] }));
  store.put('Ingress', ingress('good', 'alias.example.com', [['/', 'Prefix', 'web', 80]], { tls: [{ hosts: ['alias.example.com'], secretName: 'good' }] }));
  const { config, warnings } = build(store);
  const server = (h: string) => config.servers.find((s) => s.hostname === h)!;
  assert.ok(warnings.some((w) => /huge/.test(`${w.object} ${w.field} ${w.message}`) && /tls\.crt.*larger than 1048576 bytes/.test(w.message)),
    warnings.map((w) => `${w.object}: ${w.message}`).join('\n'));
  assert.is(server('tls.example.com').tlsSecret, null, 'the huge chain is not used');
  assert.is(server('alias.example.com').tlsSecret, 'default/good');
  assert.ok(JSON.stringify(config).length < 1024 * 1024, 'no copy of the 5 MB chain in the model');
});

test.run();
