// The quarantine's rules: what it hides from the model, when an object leaves it (its own change,
// a change around it, not a status update), the ConfigMap's fallback; and how NGINX's file:line
// is mapped back to a location's Ingress, a server, or the settings.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createStore, defaultStoreOptions } from '../../../src/store/store.js';
import type { SourceEvent } from '../../../src/store/events.js';
import type { Store } from '../../../src/store/types.js';
import { createQuarantine } from '../../../src/model/core/quarantine.js';
import { createModelBuilder } from '../../../src/model/build.js';
import { createRenderer } from '../../../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR } from '../../../src/render/runtime.js';
import { offlineRuntime } from '../../../src/render/offline.js';
import { createNarrower, firstError, locate, serviceEntryCulprits } from '../../../src/actors/quarantine.js';
import { silentLogger } from '../../../src/log.js';
import { ingress, service } from '../../support/local-harness.js';
import { ANNOTATION_REFERENCES } from '../../../src/model/ingress/annotations/index.js';

function storeWith(objects: object[]): Store {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true, configmap: 'ingress/nginx' }, ANNOTATION_REFERENCES);
  for (const o of objects) put(store, o);
  return store;
}

function put(store: Store, o: object, type: 'add' | 'update' | 'delete' = 'update'): void {
  const obj = o as { kind: SourceEvent['kind']; metadata: { namespace?: string; name: string } };
  store.apply({ kind: obj.kind, type, key: `${obj.metadata.namespace ?? 'default'}/${obj.metadata.name}`, object: obj } as unknown as SourceEvent);
}

const web = (name: string, host: string, annotations: Record<string, string> = {}) =>
  ingress('app', name, { host, paths: [{ path: '/', service: 'web' }], annotations });
const nothing = { objects: [], everything: false };

test('a quarantined Ingress is hidden from the model until it changes; a status update is no change', () => {
  const store = storeWith([service('app', 'web'), web('bad', 'bad.test'), web('good', 'good.test')]);
  const q = createQuarantine();
  q.addIngress(store, 'app/bad', 'unknown directive');
  const view = q.view(store);
  assert.equal(view.listIngresses().map((i) => i.metadata.name), ['good']);
  assert.is(view.getIngress('app/bad'), undefined);
  assert.equal(q.entries().map((e) => `${e.kind} ${e.key}: ${e.reason}`), ['Ingress app/bad: unknown directive']);

  put(store, { ...web('bad', 'bad.test'), status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } });
  assert.equal(q.release(store, { objects: [{ kind: 'Ingress', key: 'app/bad' }], everything: false }), []);
  put(store, web('bad', 'bad.test', { 'nginx.ingress.kubernetes.io/configuration-snippet': 'fixed;' }));
  assert.equal(q.release(store, { objects: [{ kind: 'Ingress', key: 'app/bad' }], everything: false }), ['Ingress app/bad']);
  assert.is(q.size, 0);
  assert.is(q.view(store), store, 'an empty quarantine is the store itself');
});

test('what surrounds it: an Ingress of one of its hosts, a Secret it names, templates and the ConfigMap let it go; an unrelated Ingress does not', () => {
  const store = storeWith([service('app', 'web'), web('bad', 'shared.test', { 'nginx.ingress.kubernetes.io/auth-secret': 'pw', 'nginx.ingress.kubernetes.io/auth-type': 'basic' }), web('other', 'other.test')]);
  const q = createQuarantine();
  q.addIngress(store, 'app/bad', 'x');
  put(store, web('other', 'other.test', { a: 'b' }));
  assert.equal(q.release(store, { objects: [{ kind: 'Ingress', key: 'app/other' }], everything: false }), []);
  put(store, web('neighbour', 'shared.test'), 'add');
  assert.equal(q.release(store, { objects: [{ kind: 'Ingress', key: 'app/neighbour' }], everything: false }), ['Ingress app/bad']);
  q.addIngress(store, 'app/bad', 'x');
  put(store, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'pw', namespace: 'app' }, data: {} }, 'add');
  assert.equal(q.release(store, { objects: [{ kind: 'Secret', key: 'app/pw' }], everything: false }), ['Ingress app/bad']);
  q.addIngress(store, 'app/bad', 'x');
  assert.equal(q.release(store, { objects: [], everything: true }), ['Ingress app/bad']);
  q.addIngress(store, 'app/bad', 'x');
  assert.equal(q.release(store, nothing), []);
});

test('a quarantined ConfigMap: the model reads its last accepted version (or defaults) until it changes', () => {
  const good = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress' }, data: { 'proxy-read-timeout': '7' } };
  const store = storeWith([good]);
  const q = createQuarantine();
  q.accepted(q.view(store));
  const bad = { ...good, data: { 'max-worker-connections': '1' } };
  put(store, bad);
  q.addConfigMap(store, 'worker_connections are not enough');
  assert.equal(q.view(store).getConfigMap('ingress/nginx')?.data, { 'proxy-read-timeout': '7' });
  assert.equal(q.release(store, nothing), []);
  put(store, { ...good, data: { 'proxy-read-timeout': '9' } });
  assert.equal(q.release(store, nothing), ['ConfigMap ingress/nginx']);

  const fresh = createQuarantine();
  fresh.addConfigMap(store, 'x');
  assert.equal(fresh.view(store).getConfigMap('ingress/nginx')?.data, {}, 'nothing accepted yet: defaults');
});

test('NGINX\'s file:line maps to the location\'s Ingress, the server, or the settings', () => {
  const store = storeWith([service('app', 'web'), web('a', 'a.test'), web('b', 'b.test', { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '5' })]);
  const { config } = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181 }).build(store);
  const rendered = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() }).renderChunks(config, offlineRuntime(8181));
  const lines = rendered.chunks.join('').split('\n');
  const at = (pred: (l: string) => boolean, from = 0) => lines.findIndex((l, i) => i >= from && pred(l)) + 1;
  const emerg = (line: number) => `nginx: [emerg] something wrong in /x/.nginx.conf.tmp-1-2:${line}\nnginx: configuration file /x test failed`;

  const bServer = at((l) => l.includes('## start server b.test'));
  const bTimeout = at((l) => l.includes('proxy_read_timeout 5s'), bServer);
  assert.equal(locate(emerg(bTimeout), rendered, config, store), { kind: 'ingress', key: 'app/b', field: 'location "/" of b.test (proxy_read_timeout)' });
  const bListen = at((l) => l.trim().startsWith('listen'), bServer);
  assert.equal(locate(emerg(bListen), rendered, config, store), { kind: 'server', index: config.servers.findIndex((s) => s.hostname === 'b.test') });
  const head = at((l) => l.trim().startsWith('keepalive_timeout'));
  assert.is(locate(emerg(head), rendered, config, store).kind, 'configmap');
  assert.equal(locate(emerg(lines.length - 1), rendered, config, store), { kind: 'unknown' }, 'the closing brace: an error found while merging');
  assert.equal(locate('nginx: [emerg] no line here', rendered, config, store), { kind: 'unknown' });
  const narrower = createNarrower({ store, quarantine: createQuarantine(), builder: createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181 }), probeBuilder: () => createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181 }), logger: silentLogger() });
  assert.is(narrower.explain({ config, rendered, output: emerg(bTimeout) }), 'something wrong [Ingress app/b, location "/" of b.test (proxy_read_timeout)]');
  assert.is(firstError('2026/11/25 01:42:37 [emerg] 12821#12821: there must be at least 2 "proxy_buffers" in /x:3'), 'there must be at least 2 "proxy_buffers"');
});

test('an entry of a TCP services ConfigMap NGINX refuses is found (a failed bind, a line of its stream server), set aside alone, and let go when the ConfigMap changes', () => {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true, tcpServicesConfigmap: 'ingress/tcp' }, ANNOTATION_REFERENCES);
  const tcp = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'tcp', namespace: 'ingress' }, data });
  for (const o of [service('app', 'web'), web('a', 'a.test'), tcp({ '5432': 'app/web:80', '6000': 'app/web:80' })]) put(store, o);
  const { config } = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181 }).build(store);
  const rendered = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() }).renderChunks(config, offlineRuntime(8181));
  const lines = rendered.chunks.join('').split('\n');
  const bind = 'nginx: [emerg] bind() to 0.0.0.0:6000 failed (98: Address already in use)';
  assert.equal(serviceEntryCulprits({ config, rendered, output: bind }, store), [{ configmap: 'ingress/tcp', port: '6000' }]);
  const listen = lines.findIndex((l) => /listen .*:5432;/.test(l)) + 1;
  assert.equal(serviceEntryCulprits({ config, rendered, output: `nginx: [emerg] something in /x/nginx.conf:${listen}` }, store), [{ configmap: 'ingress/tcp', port: '5432' }]);
  const upstream = lines.findIndex((l) => l.includes('upstream tcp-6000 {')) + 2;
  assert.equal(serviceEntryCulprits({ config, rendered, output: `nginx: [emerg] invalid port in /x/nginx.conf:${upstream}` }, store), [{ configmap: 'ingress/tcp', port: '6000' }]);
  assert.equal(serviceEntryCulprits({ config, rendered, output: 'nginx: [emerg] bind() to 0.0.0.0:7777 failed' }, store), [], 'not an entry\'s port');

  const q = createQuarantine();
  q.addServiceEntry(store, 'ingress/tcp', '6000', 'bind() failed');
  assert.equal(Object.keys(q.view(store).getConfigMap('ingress/tcp')!.data!), ['5432']);
  assert.equal(q.entries().map((e) => `${e.kind} ${e.key}`), ['ConfigMap ingress/tcp:6000']);
  assert.equal(q.release(store, { objects: [{ kind: 'Ingress', key: 'app/a' }], everything: false }), []);
  put(store, tcp({ '5432': 'app/web:80', '6000': 'app/web:80', '7000': 'app/web:80' }));
  assert.equal(q.release(store, { objects: [{ kind: 'ConfigMap', key: 'ingress/tcp' }], everything: false }), ['ConfigMap ingress/tcp:6000']);
});

test.run();
