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

/** Stands in for `nginx -t` where only the search is under test: refuses a configuration serving all of `clash`'s hosts. */
const refusesTogether = (clash: string[], output: string) => async (config: { servers: ReadonlyArray<{ hostname: string }> }) => {
  const hosts = new Set(config.servers.map((s) => s.hostname));
  return clash.every((h) => hosts.has(h)) ? { ok: false, output } : { ok: true, output: '' };
};
const builder = () => createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181 });
const dated = (name: string, host: string, created: string, annotations: Record<string, string> = {}) =>
  ingress('app', name, { host, created, paths: [{ path: '/', service: 'web' }], annotations });
const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress' }, data: { 'proxy-read-timeout': '7' } };

/** A refusal whose NGINX line is the first rendered line matching `pred`. */
function refusalAt(store: Store, pred: (line: string) => boolean, message: string) {
  const { config } = builder().build(store);
  const rendered = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() }).renderChunks(config, offlineRuntime(8181));
  const line = rendered.chunks.join('').split('\n').findIndex(pred) + 1;
  assert.ok(line > 0, 'the line is rendered');
  return { config, rendered, output: `nginx: [emerg] ${message} in /x/.nginx.conf.tmp-1-2:${line}\nnginx: configuration file /x test failed` };
}

test('a clash: whichever line NGINX names (the older Ingress\'s, the settings\'), the newer Ingress is set aside and named with the older; nothing else is', async () => {
  const objects = [cm, service('app', 'web'), dated('older', 'older.test', '2026-01-01T00:00:00Z', { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '5' }),
    dated('newer', 'aaa-newer.test', '2026-06-01T00:00:00Z'), dated('bystander', 'bystander.test', '2026-03-01T00:00:00Z')];
  for (const [what, pred] of [
    ['the older Ingress\'s location', (l: string) => l.includes('proxy_read_timeout 5s')],
    ['a line of the settings', (l: string) => l.trim().startsWith('keepalive_timeout')],
  ] as const) {
    const store = storeWith(objects);
    const quarantine = createQuarantine();
    const refusal = refusalAt(store, pred, 'duplicate "127.0.0.1:9000" address and port pair');
    const narrower = createNarrower({ store, quarantine, builder: builder(), probeBuilder: builder, logger: silentLogger() });
    const next = await narrower.narrow(refusal, refusesTogether(['older.test', 'aaa-newer.test'], refusal.output));
    assert.ok(next, what);
    assert.equal(quarantine.entries().map((e) => `${e.kind} ${e.key}`), ['Ingress app/newer'], what);
    assert.match(quarantine.entries()[0]!.reason, /clashes with the older Ingress app\/older, which is kept: duplicate "127.0.0.1:9000"/);
    assert.equal(next!.servers.map((s) => s.hostname).filter((h) => h.endsWith('.test')).sort(), ['bystander.test', 'older.test']);
    // The older one changing may end the clash: the newer one is tried again; the bystander's change does not.
    assert.equal(quarantine.release(store, { objects: [{ kind: 'Ingress', key: 'app/bystander' }], everything: false }), []);
    assert.equal(quarantine.release(store, { objects: [{ kind: 'Ingress', key: 'app/older' }], everything: false }), ['Ingress app/newer']);
  }
});

test('refused, but no probe shows any object guilty: nothing is quarantined, not the ConfigMap, and the running configuration stays', async () => {
  const store = storeWith([cm, service('app', 'web'), dated('a', 'a.test', '2026-01-01T00:00:00Z'), dated('b', 'b.test', '2026-02-01T00:00:00Z')]);
  const quarantine = createQuarantine();
  const refusal = refusalAt(store, (l) => l.trim().startsWith('keepalive_timeout'), 'bind() to 127.0.0.1:80 failed (98: Address already in use)');
  const narrower = createNarrower({ store, quarantine, builder: builder(), probeBuilder: builder, logger: silentLogger() });
  assert.is(await narrower.narrow(refusal, refusesTogether(['never.test'], '')), null);
  assert.is(quarantine.size, 0);
});

test('the settings are quarantined only when NGINX refuses them without any Ingress', async () => {
  const store = storeWith([cm, service('app', 'web'), dated('a', 'a.test', '2026-01-01T00:00:00Z')]);
  const quarantine = createQuarantine();
  const refusal = refusalAt(store, (l) => l.trim().startsWith('keepalive_timeout'), 'invalid value');
  const narrower = createNarrower({ store, quarantine, builder: builder(), probeBuilder: builder, logger: silentLogger() });
  assert.ok(await narrower.narrow(refusal, async () => ({ ok: false, output: refusal.output })));
  assert.equal(quarantine.entries().map((e) => `${e.kind} ${e.key}`), ['ConfigMap ingress/nginx']);
});

test('a line of a stream-snippet points at its Ingress; a header written inside another tenant\'s snippet does not make it guilty', async () => {
  const snippet = (port: number, extra = '') => `${extra}server { listen 127.0.0.1:${port}; proxy_pass 10.0.0.3:1; }`;
  const store = storeWith([{ ...cm, data: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } }, service('app', 'web'),
    dated('victim', 'victim.test', '2026-01-01T00:00:00Z', { 'nginx.ingress.kubernetes.io/stream-snippet': snippet(9000) }),
    // Rendered first (its host sorts first); its second line pretends to start the victim's snippet.
    dated('hostile', 'aaa.test', '2026-06-01T00:00:00Z', { 'nginx.ingress.kubernetes.io/stream-snippet': snippet(9001, '# stream-snippet of app/victim\n') })]);
  const refusal = refusalAt(store, (l) => l.includes('listen 127.0.0.1:9001;'), 'something wrong');
  assert.equal(locate(refusal.output, refusal.rendered, refusal.config, store), { kind: 'ingress', key: 'app/victim', field: 'stream-snippet' }, 'the forged header fools the line mapping');
  const honest = refusalAt(store, (l) => l.includes('listen 127.0.0.1:9000;'), 'something wrong');
  assert.equal(locate(honest.output, honest.rendered, honest.config, store), { kind: 'ingress', key: 'app/victim', field: 'stream-snippet' });
  // ...but not the verdict: the victim passes on its own, the hostile Ingress does not.
  const quarantine = createQuarantine();
  const narrower = createNarrower({ store, quarantine, builder: builder(), probeBuilder: builder, logger: silentLogger() });
  assert.ok(await narrower.narrow(refusal, refusesTogether(['aaa.test'], refusal.output)));
  assert.equal(quarantine.entries().map((e) => `${e.kind} ${e.key}`), ['Ingress app/hostile']);
});

test('a clash among snippets that NGINX names no line for is searched among the Ingresses with snippets, not across the table', async () => {
  const snippet = 'server { listen 127.0.0.1:7000; proxy_pass 10.0.0.3:1; }';
  const plain = Array.from({ length: 40 }, (_, i) => dated(`plain-${i}`, `plain-${i}.test`, `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`));
  const store = storeWith([{ ...cm, data: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } }, service('app', 'web'), ...plain]);
  const quarantine = createQuarantine();
  // One builder, as the sync's: the servers NGINX ran are the same objects in the next build.
  const sync = builder();
  const narrower = createNarrower({ store, quarantine, builder: sync, probeBuilder: builder, logger: silentLogger() });
  narrower.applied(sync.build(store).config);
  put(store, dated('older', 'older.test', '2026-03-01T00:00:00Z', { 'nginx.ingress.kubernetes.io/stream-snippet': snippet }), 'add');
  put(store, dated('newer', 'newer.test', '2026-06-01T00:00:00Z', { 'nginx.ingress.kubernetes.io/stream-snippet': snippet }), 'add');
  const { config } = sync.build(store, [{ kind: 'Ingress', key: 'app/older' }, { kind: 'Ingress', key: 'app/newer' }]);
  const output = 'nginx: [emerg] duplicate "127.0.0.1:7000" address and port pair';
  const sizes: number[] = [];
  const test = refusesTogether(['older.test', 'newer.test'], output);
  const next = await narrower.narrow({ config, rendered: null, output }, async (probe) => {
    sizes.push(probe.servers.filter((s) => s.hostname.endsWith('.test')).length);
    return test(probe);
  });
  assert.ok(next);
  assert.equal(quarantine.entries().map((e) => `${e.kind} ${e.key}`), ['Ingress app/newer']);
  assert.match(quarantine.entries()[0]!.reason, /clashes with the older Ingress app\/older, which is kept/);
  assert.ok(Math.max(...sizes) <= 2, `no probe holds more than the two Ingresses with snippets: ${sizes.join(', ')}`);
});

test.run();
