// The store: ingress-nginx's class, namespace and catch-all filters, the relevance of each kind
// of event, normalisation of Ingresses, the served list's order, and its indexes at scale.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createStore, defaultStoreOptions } from '../../../src/store/store.js';
import { parseLabelSelector } from '../../../src/store/label-selector.js';
import { normaliseIngress } from '../../../src/store/normalise.js';
import { objectKey, type EventType, type ResourceKind, type SourceEvent } from '../../../src/store/events.js';
import type {
  ConfigMap, EndpointSlice, Ingress, IngressClass, KubeObject, Namespace, Secret, Service,
} from '../../../src/store/kube-types.js';
import type { StoreOptions } from '../../../src/store/types.js';

// ---- builders

function ev(kind: ResourceKind, type: EventType, object: KubeObject, old?: KubeObject): SourceEvent {
  return { kind, type, key: objectKey(object), object, ...(old ? { old } : {}) };
}

function ingress(name: string, opts: {
  ns?: string; className?: string; annotations?: Record<string, string>; created?: string;
  defaultBackend?: boolean; rules?: boolean; tls?: string[]; rv?: string; path?: string; pathType?: 'Exact' | 'Prefix' | 'ImplementationSpecific';
} = {}): Ingress {
  const backend = { service: { name: 'svc', port: { number: 80 } } };
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name,
      namespace: opts.ns ?? 'default',
      resourceVersion: opts.rv ?? '1',
      creationTimestamp: opts.created ?? '2024-01-01T00:00:00Z',
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
    },
    spec: {
      ...(opts.className !== undefined ? { ingressClassName: opts.className } : {}),
      ...(opts.defaultBackend ? { defaultBackend: backend } : {}),
      ...(opts.tls ? { tls: opts.tls.map((secretName) => ({ hosts: ['a.example.com'], secretName })) } : {}),
      ...(opts.rules === false ? {} : {
        rules: [{ host: 'a.example.com', http: { paths: [{ path: opts.path ?? '/', pathType: opts.pathType ?? 'Prefix', backend }] } }],
      }),
    },
  };
}

function ingressClass(name: string, controller: string, parameters?: Record<string, unknown>): IngressClass {
  return { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name }, spec: { controller, ...(parameters ? { parameters } : {}) } };
}

function namespace(name: string, labels: Record<string, string> = {}): Namespace {
  return { kind: 'Namespace', metadata: { name, labels } };
}

function service(name: string, spec: Service['spec'] = { type: 'ClusterIP', ports: [{ port: 80 }] }, ns = 'default', labels?: Record<string, string>): Service {
  return { kind: 'Service', metadata: { name, namespace: ns, resourceVersion: '1', ...(labels ? { labels } : {}) }, spec };
}

function slice(name: string, svc: string, ips: string[], opts: { ns?: string; ready?: boolean; rv?: string; port?: number; labels?: Record<string, string> } = {}): EndpointSlice {
  return {
    kind: 'EndpointSlice',
    metadata: { name, namespace: opts.ns ?? 'default', resourceVersion: opts.rv ?? '1', labels: { 'kubernetes.io/service-name': svc, ...(opts.labels ?? {}) } },
    addressType: 'IPv4',
    endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: opts.ready ?? true } })),
    ports: [{ name: 'http', port: opts.port ?? 8080, protocol: 'TCP' }],
  };
}

function secret(name: string, ns = 'default', extra: Partial<Secret> = {}): Secret {
  return { kind: 'Secret', metadata: { name, namespace: ns, resourceVersion: '1' }, type: 'Opaque', data: { a: 'MQ==' }, ...extra };
}

function configMap(name: string, ns: string, data: Record<string, string> = {}, labels?: Record<string, string>): ConfigMap {
  return { kind: 'ConfigMap', metadata: { name, namespace: ns, resourceVersion: '1', ...(labels ? { labels } : {}) }, data };
}

/** The store indexes whichever annotations it is told name Secrets (the model's groups say which; see annotations tests). */
const TEST_REFERENCES = { secretAnnotations: ['auth-secret', 'auth-tls-secret', 'proxy-ssl-secret'] };

function store(over: Partial<StoreOptions> = {}) {
  return createStore({ ...defaultStoreOptions(), ...over }, TEST_REFERENCES);
}

const served = (s: ReturnType<typeof store>) => s.listIngresses().map(objectKey);

// ---- ingress class

const classes = suite('store: ingress class rules (ingress-nginx order)');

const OURS = ingressClass('nginx', 'k8s.io/ingress-nginx');
const THEIRS = ingressClass('other', 'example.com/other');
const OURS_BY_OTHER_NAME = ingressClass('internal', 'k8s.io/ingress-nginx');
const NAMED_NGINX_OTHER_CONTROLLER = ingressClass('nginx', 'example.com/other');

const classTable: Array<[string, Partial<StoreOptions>, IngressClass[], Parameters<typeof ingress>[1], boolean]> = [
  ['ingressClassName naming our IngressClass', {}, [OURS], { className: 'nginx' }, true],
  ['ingressClassName naming another IngressClass of our controller', {}, [OURS_BY_OTHER_NAME], { className: 'internal' }, true],
  ['ingressClassName naming a missing IngressClass', {}, [], { className: 'nginx' }, false],
  ['ingressClassName naming another controller\'s IngressClass', {}, [OURS, THEIRS], { className: 'other' }, false],
  ['ingressClassName wins over a matching annotation (missing class)', {}, [OURS], { className: 'missing', annotations: { 'kubernetes.io/ingress.class': 'nginx' } }, false],
  ['ingressClassName wins over a matching annotation (other controller)', {}, [OURS, THEIRS], { className: 'other', annotations: { 'kubernetes.io/ingress.class': 'nginx' } }, false],
  ['ingressClassName wins over a foreign annotation', {}, [OURS], { className: 'nginx', annotations: { 'kubernetes.io/ingress.class': 'other' } }, true],
  ['annotation equal to --ingress-class', {}, [], { annotations: { 'kubernetes.io/ingress.class': 'nginx' } }, true],
  ['annotation of another class', {}, [OURS], { annotations: { 'kubernetes.io/ingress.class': 'other' } }, false],
  ['empty annotation', {}, [OURS], { annotations: { 'kubernetes.io/ingress.class': '' } }, false],
  ['foreign annotation even with --watch-ingress-without-class', { watchIngressWithoutClass: true }, [], { annotations: { 'kubernetes.io/ingress.class': 'other' } }, false],
  ['custom --ingress-class annotation', { ingressClass: 'internal' }, [], { annotations: { 'kubernetes.io/ingress.class': 'internal' } }, true],
  ['no class at all', {}, [OURS], {}, false],
  ['no class with --watch-ingress-without-class', { watchIngressWithoutClass: true }, [], {}, true],
  ['missing IngressClass with --watch-ingress-without-class', { watchIngressWithoutClass: true }, [], { className: 'nginx' }, false],
  ['--ingress-class-by-name: IngressClass of that name but another controller', { ingressClassByName: true }, [NAMED_NGINX_OTHER_CONTROLLER], { className: 'nginx' }, true],
  ['--ingress-class-by-name: no IngressClass object yet', { ingressClassByName: true }, [], { className: 'nginx' }, true],
  ['without --ingress-class-by-name: name matches but controller does not', {}, [NAMED_NGINX_OTHER_CONTROLLER], { className: 'nginx' }, false],
  ['custom --controller-class', { controllerClass: 'example.com/other' }, [THEIRS], { className: 'other' }, true],
];

for (const [name, over, ics, spec, expected] of classTable) {
  classes(name, () => {
    const s = store(over);
    for (const ic of ics) s.apply(ev('IngressClass', 'add', ic));
    const r = s.apply(ev('Ingress', 'add', ingress('web', spec)));
    assert.is(r.relevant, expected, r.reason);
    assert.equal(served(s), expected ? ['default/web'] : []);
    assert.is(s.getIngress('default/web') !== undefined, expected);
  });
}

classes('IngressClass add/update/delete re-evaluates the Ingresses naming it', () => {
  const s = store();
  assert.is(s.apply(ev('Ingress', 'add', ingress('web', { className: 'nginx' }))).relevant, false);
  assert.is(s.apply(ev('Ingress', 'add', ingress('api', { annotations: { 'kubernetes.io/ingress.class': 'nginx' } }))).relevant, true);
  assert.equal(served(s), ['default/api']);

  const add = s.apply(ev('IngressClass', 'add', OURS));
  assert.is(add.relevant, true, add.reason);
  assert.equal(served(s).sort(), ['default/api', 'default/web']);

  const params = s.apply(ev('IngressClass', 'update', ingressClass('nginx', 'k8s.io/ingress-nginx', { kind: 'X', name: 'y' }), OURS));
  assert.is(params.relevant, false, 'served set unchanged');

  const handOver = s.apply(ev('IngressClass', 'update', NAMED_NGINX_OTHER_CONTROLLER, OURS));
  assert.is(handOver.relevant, true, handOver.reason);
  assert.equal(served(s), ['default/api']);

  s.apply(ev('IngressClass', 'update', OURS, NAMED_NGINX_OTHER_CONTROLLER));
  assert.equal(served(s).length, 2);
  const del = s.apply(ev('IngressClass', 'delete', OURS));
  assert.is(del.relevant, true);
  assert.equal(served(s), ['default/api']);

  assert.is(s.apply(ev('IngressClass', 'add', THEIRS)).relevant, false, 'nobody names it');
});

classes('Ingresses left out are listed with their reason, follow IngressClass changes, and leave the list when deleted', () => {
  const s = store();
  const empty = s.leftOutIngresses();
  assert.equal(empty, []);
  s.apply(ev('Ingress', 'add', ingress('web', { className: 'nginx' })));
  s.apply(ev('Ingress', 'add', ingress('typo', { annotations: { 'kubernetes.io/ingress.class': 'ngnix' } })));
  s.apply(ev('Ingress', 'add', ingress('api', { annotations: { 'kubernetes.io/ingress.class': 'nginx' } })));
  const list = s.leftOutIngresses();
  assert.equal(list, [
    { key: 'default/typo', reason: 'annotation kubernetes.io/ingress.class="ngnix" is not "nginx"' },
    { key: 'default/web', reason: 'IngressClass "nginx" not found' },
  ]);
  assert.ok(s.leftOutIngresses() === list, 'the same array while nothing changed');
  s.apply(ev('IngressClass', 'add', OURS));
  assert.equal(s.leftOutIngresses().map((l) => l.key), ['default/typo']);
  s.apply(ev('IngressClass', 'update', NAMED_NGINX_OTHER_CONTROLLER, OURS));
  assert.match(s.leftOutIngresses().find((l) => l.key === 'default/web')!.reason, 'belongs to controller');
  s.apply(ev('Ingress', 'delete', ingress('typo', { annotations: { 'kubernetes.io/ingress.class': 'ngnix' } })));
  assert.equal(s.leftOutIngresses().map((l) => l.key), ['default/web']);
  // A hostile class value cannot write lines or terminal escapes into render's output or the log.
  s.apply(ev('Ingress', 'add', ingress('evil', { annotations: { 'kubernetes.io/ingress.class': `x\n\u001b[2Jleft out: Ingress a/b ${'y'.repeat(500)}` } })));
  const evil = s.leftOutIngresses().find((l) => l.key === 'default/evil')!.reason;
  assert.not.match(evil, /[\u0000-\u001f]/);
  assert.ok(evil.length < 200, evil);
});

// ---- namespaces

const namespaces = suite('store: watched namespaces');

namespaces('--watch-namespace restricts Ingresses and the objects they use', () => {
  const s = store({ watchNamespaces: ['team-a'], watchIngressWithoutClass: true });
  assert.is(s.apply(ev('Ingress', 'add', ingress('web', { ns: 'team-a' }))).relevant, true);
  assert.is(s.apply(ev('Ingress', 'add', ingress('web', { ns: 'team-b' }))).relevant, false);
  assert.equal(served(s), ['team-a/web']);
  assert.is(s.apply(ev('EndpointSlice', 'add', slice('svc-1', 'svc', ['10.0.0.1'], { ns: 'team-b' }))).relevant, false);
  assert.is(s.apply(ev('EndpointSlice', 'add', slice('svc-1', 'svc', ['10.0.0.1'], { ns: 'team-a' }))).relevant, true);
});

namespaces('--watch-namespace-selector follows Namespace labels', () => {
  const s = store({ watchNamespaceSelector: 'env in (prod,staging),tier!=db,!legacy', watchIngressWithoutClass: true });
  assert.is(s.apply(ev('Ingress', 'add', ingress('web', { ns: 'shop' }))).relevant, false, 'namespace not known yet');
  const add = s.apply(ev('Namespace', 'add', namespace('shop', { env: 'prod' })));
  assert.is(add.relevant, true, add.reason);
  assert.equal(served(s), ['shop/web']);
  assert.is(s.apply(ev('Namespace', 'update', namespace('shop', { env: 'prod', owner: 'x' }))).relevant, false, 'still selected');
  assert.is(s.apply(ev('Namespace', 'update', namespace('shop', { env: 'prod', legacy: 'yes' }))).relevant, true);
  assert.equal(served(s), []);
  assert.is(s.apply(ev('Namespace', 'update', namespace('shop', { env: 'staging', tier: 'web' }))).relevant, true);
  assert.equal(served(s), ['shop/web']);
  assert.is(s.apply(ev('Namespace', 'delete', namespace('shop', {}))).relevant, true);
  assert.equal(served(s), []);
  assert.is(s.apply(ev('Namespace', 'add', namespace('empty', { env: 'prod' }))).relevant, false, 'no Ingress there');
});

namespaces('Namespace events are irrelevant without a selector', () => {
  const s = store({ watchIngressWithoutClass: true });
  s.apply(ev('Ingress', 'add', ingress('web', { ns: 'shop' })));
  assert.is(s.apply(ev('Namespace', 'add', namespace('shop'))).relevant, false);
  assert.equal(served(s), ['shop/web']);
});

namespaces('a bad selector is refused when the store is created', () => {
  assert.throws(() => store({ watchNamespaceSelector: 'env in (prod' }), /label selector/);
});

const selectors = suite('store: label selector syntax');
const selectorTable: Array<[string, Record<string, string>, boolean]> = [
  ['', {}, true],
  ['env=prod', { env: 'prod' }, true],
  ['env==prod', { env: 'prod' }, true],
  ['env=prod', { env: 'dev' }, false],
  ['env!=prod', {}, true],
  ['env!=prod', { env: 'prod' }, false],
  ['env in (a, b)', { env: 'b' }, true],
  ['env in (a,b)', {}, false],
  ['env notin (a,b)', {}, true],
  ['env notin (a,b)', { env: 'a' }, false],
  ['!legacy', { legacy: '' }, false],
  ['!legacy', {}, true],
  ['team', { team: 'x' }, true],
  ['team', {}, false],
  ['example.com/team=a, env in (prod), !x', { 'example.com/team': 'a', env: 'prod' }, true],
];
for (const [text, labels, expected] of selectorTable) {
  selectors(`"${text}" against ${JSON.stringify(labels)}`, () => {
    assert.is(parseLabelSelector(text).matches(labels), expected);
  });
}
selectors('invalid selectors name the bad term', () => {
  for (const bad of ['env in prod', 'env=(x)', '=x', 'a b', 'env in (a', ',']) {
    assert.throws(() => parseLabelSelector(bad), /label selector/, bad);
  }
});

// ---- catch-all

const catchAll = suite('store: --disable-catch-all');
catchAll('Ingresses with a default backend are dropped, rules or not (as ingress-nginx)', () => {
  const s = store({ disableCatchAll: true, watchIngressWithoutClass: true });
  assert.is(s.apply(ev('Ingress', 'add', ingress('only-default', { defaultBackend: true, rules: false }))).relevant, false);
  assert.is(s.apply(ev('Ingress', 'add', ingress('both', { defaultBackend: true }))).relevant, false);
  assert.is(s.apply(ev('Ingress', 'add', ingress('rules')) ).relevant, true);
  assert.equal(served(s), ['default/rules']);
  const becomesCatchAll = s.apply(ev('Ingress', 'update', ingress('rules', { defaultBackend: true, rv: '2' })));
  assert.is(becomesCatchAll.relevant, true, 'stops being served');
  assert.equal(served(s), []);
});
catchAll('without the flag catch-all Ingresses are served', () => {
  const s = store({ watchIngressWithoutClass: true });
  assert.is(s.apply(ev('Ingress', 'add', ingress('only-default', { defaultBackend: true, rules: false }))).relevant, true);
});

// ---- relevance

const relevance = suite('store: relevance of events');

relevance('Ingress: served, unserved, starting and stopping, no-op updates keep identity', () => {
  const s = store();
  s.apply(ev('IngressClass', 'add', OURS));
  const a = ingress('web', { className: 'nginx' });
  assert.is(s.apply(ev('Ingress', 'add', a)).relevant, true);
  const stored = s.getIngress('default/web');
  const noop = s.apply(ev('Ingress', 'update', { ...a, metadata: { ...a.metadata, resourceVersion: '9', managedFields: [{ manager: 'kubectl' }] } as Ingress['metadata'] }));
  assert.is(noop.relevant, false, noop.reason);
  assert.is(s.getIngress('default/web'), stored, 'object identity kept');
  assert.is(s.apply(ev('Ingress', 'update', ingress('web', { className: 'nginx', path: '/v2', rv: '3' }))).relevant, true);
  assert.is.not(s.getIngress('default/web'), stored);
  const leave = s.apply(ev('Ingress', 'update', ingress('web', { className: 'other', rv: '4' })));
  assert.is(leave.relevant, true, leave.reason);
  assert.ok(/no longer served/.test(leave.reason));
  assert.is(s.getIngress('default/web'), undefined);
  assert.is(s.apply(ev('Ingress', 'update', ingress('web', { className: 'other', path: '/x', rv: '5' }))).relevant, false);
  const back = s.apply(ev('Ingress', 'update', ingress('web', { className: 'nginx', rv: '6' })));
  assert.is(back.relevant, true);
  assert.ok(/now served/.test(back.reason));
  assert.is(s.apply(ev('Ingress', 'delete', ingress('web', { className: 'nginx' }))).relevant, true);
  assert.is(s.apply(ev('Ingress', 'delete', ingress('web', { className: 'nginx' }))).relevant, false, 'already gone');
  s.apply(ev('Ingress', 'add', ingress('foreign', { className: 'other' })));
  assert.is(s.apply(ev('Ingress', 'delete', ingress('foreign', { className: 'other' }))).relevant, false);
});

relevance('Ingress: a change of its status alone is kept, marked statusOnly and costs no sync (our own status writes come back as events); status with anything else is relevant', () => {
  const s = store();
  s.apply(ev('IngressClass', 'add', OURS));
  const a = ingress('web', { className: 'nginx' });
  s.apply(ev('Ingress', 'add', a));
  const withStatus = (i: Ingress, ip: string, rv: string): Ingress => ({ ...i, metadata: { ...i.metadata, resourceVersion: rv }, status: { loadBalancer: { ingress: [{ ip }] } } });
  const written = s.apply(ev('Ingress', 'update', withStatus(a, '192.0.2.10', '2')));
  assert.equal([written.relevant, written.statusOnly], [false, true], written.reason);
  assert.equal(s.getIngress('default/web')?.status, { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } }, 'the status actor reads the new status');
  assert.is(s.listIngresses()[0]?.status?.loadBalancer?.ingress?.[0]?.ip, '192.0.2.10', 'the served list holds the new object too');
  assert.equal(served(s), ['default/web']);
  const same = s.apply(ev('Ingress', 'update', withStatus(a, '192.0.2.10', '3')));
  assert.equal([same.relevant, same.statusOnly], [false, undefined], 'resourceVersion alone: unchanged');
  const moved = s.apply(ev('Ingress', 'update', withStatus(ingress('web', { className: 'nginx', path: '/v2' }), '192.0.2.11', '4')));
  assert.equal([moved.relevant, moved.statusOnly], [true, undefined], 'a path changed with the status');
  const leave = s.apply(ev('Ingress', 'update', withStatus(ingress('web', { className: 'other', path: '/v2' }), '192.0.2.11', '5')));
  assert.is(leave.relevant, true, 'the class changed: no longer served');
  const foreign = s.apply(ev('Ingress', 'update', withStatus(ingress('web', { className: 'other', path: '/v2' }), '192.0.2.12', '6')));
  assert.equal([foreign.relevant, foreign.statusOnly], [false, undefined], 'not ours: not for our status actor either');
});

relevance('Service: a change of the --publish-service Service\'s status alone is statusOnly (the statuses publish its addresses); any other Service\'s status is irrelevant', () => {
  const s = store({ publishService: 'ingress/ingress-rx', watchNamespaces: ['default'] });
  const lb = (svc: Service, rv: string, ingress: Array<{ ip?: string; hostname?: string }>): Service => ({ ...svc, metadata: { ...svc.metadata, resourceVersion: rv }, status: { loadBalancer: { ingress } } });
  const own = service('ingress-rx', { type: 'LoadBalancer', ports: [{ port: 80 }] }, 'ingress');
  const other = service('web', { ports: [{ port: 80 }] });
  s.apply(ev('Service', 'add', lb(own, '1', [{ ip: '192.0.2.10' }])));
  s.apply(ev('Service', 'add', lb(other, '1', [])));
  const named = s.apply(ev('Service', 'update', lb(own, '2', [{ ip: '192.0.2.10' }, { hostname: 'lb.example.test' }])));
  assert.equal([named.relevant, named.statusOnly], [false, true], named.reason);
  const same = s.apply(ev('Service', 'update', lb(own, '3', [{ ip: '192.0.2.10' }, { hostname: 'lb.example.test' }])));
  assert.is(same.statusOnly, undefined, 'resourceVersion alone: unchanged');
  const elsewhere = s.apply(ev('Service', 'update', lb(other, '2', [{ ip: '192.0.2.99' }])));
  assert.equal([elsewhere.relevant, elsewhere.statusOnly], [false, undefined], elsewhere.reason);
  const without = store({ watchNamespaces: ['default'] });
  without.apply(ev('Service', 'add', lb(own, '1', [{ ip: '192.0.2.10' }])));
  assert.is(without.apply(ev('Service', 'update', lb(own, '2', [{ ip: '192.0.2.11' }]))).statusOnly, undefined, 'no --publish-service');
});

relevance('EndpointSlice: only endpoint, port or condition changes matter', () => {
  const s = store();
  const a = slice('echo-abc', 'echo', ['10.0.0.1', '10.0.0.2']);
  assert.is(s.apply(ev('EndpointSlice', 'add', a)).relevant, true);
  assert.is(s.apply(ev('EndpointSlice', 'update', slice('echo-abc', 'echo', ['10.0.0.1', '10.0.0.2'], { rv: '2' }))).relevant, false, 'resourceVersion only');
  assert.is(s.apply(ev('EndpointSlice', 'update', slice('echo-abc', 'echo', ['10.0.0.1', '10.0.0.2'], { rv: '3', labels: { extra: 'x' } }))).relevant, false, 'labels only');
  assert.is(s.apply(ev('EndpointSlice', 'update', slice('echo-abc', 'echo', ['10.0.0.1', '10.0.0.2'], { rv: '4', ready: false }))).relevant, true, 'condition');
  assert.is(s.apply(ev('EndpointSlice', 'update', slice('echo-abc', 'echo', ['10.0.0.1'], { rv: '5', ready: false }))).relevant, true, 'endpoints');
  assert.is(s.apply(ev('EndpointSlice', 'update', slice('echo-abc', 'echo', ['10.0.0.1'], { rv: '6', ready: false, port: 9090 }))).relevant, true, 'ports');
  assert.equal(s.getEndpointSlices('default/echo').map((x) => x.ports?.[0]?.port), [9090]);
  s.apply(ev('EndpointSlice', 'add', slice('echo-def', 'echo', ['10.0.0.9'])));
  assert.equal(s.getEndpointSlices('default/echo').map((x) => x.metadata.name).sort(), ['echo-abc', 'echo-def']);
  assert.is(s.apply(ev('EndpointSlice', 'delete', a)).relevant, true);
  assert.equal(s.getEndpointSlices('default/echo').map((x) => x.metadata.name), ['echo-def']);
  assert.equal(s.getEndpointSlices('default/nothing'), []);
  const moved = s.apply(ev('EndpointSlice', 'update', slice('echo-def', 'other', ['10.0.0.9'], { rv: '7' })));
  assert.is(moved.relevant, true, 'moved to another Service');
  assert.equal(s.getEndpointSlices('default/echo'), []);
  assert.equal(s.getEndpointSlices('default/other').length, 1);
});

relevance('Service: ExternalName add/delete, spec updates, default backend', () => {
  const s = store({ defaultBackendService: 'infra/default-http-backend' });
  assert.is(s.apply(ev('Service', 'add', service('echo'))).relevant, false);
  assert.ok(s.getService('default/echo'), 'cached anyway');
  assert.is(s.apply(ev('Service', 'add', service('ext', { type: 'ExternalName', externalName: 'example.com' }))).relevant, true);
  assert.is(s.apply(ev('Service', 'update', service('echo', { type: 'ClusterIP', ports: [{ port: 80 }] }, 'default', { team: 'a' }))).relevant, false, 'metadata only');
  assert.is(s.apply(ev('Service', 'update', service('echo', { type: 'ClusterIP', ports: [{ port: 81 }] }))).relevant, true, 'spec changed');
  assert.is(s.apply(ev('Service', 'delete', service('echo'))).relevant, false);
  assert.is(s.apply(ev('Service', 'delete', service('ext', { type: 'ExternalName', externalName: 'example.com' }))).relevant, true);
  assert.is(s.apply(ev('Service', 'add', service('default-http-backend', undefined, 'infra'))).relevant, true);
  s.apply(ev('EndpointSlice', 'add', slice('late-1', 'late', ['10.0.0.1'])));
  assert.is(s.apply(ev('Service', 'add', service('late'))).relevant, true, 'added after its slices');
});

relevance('Secret: only when a served Ingress references it, or the default certificate', () => {
  const s = store({ defaultSSLCertificate: 'infra/wildcard' });
  s.apply(ev('IngressClass', 'add', OURS));
  s.apply(ev('Ingress', 'add', ingress('web', {
    className: 'nginx',
    tls: ['web-tls'],
    annotations: {
      'nginx.ingress.kubernetes.io/auth-secret': 'basic-auth',
      'nginx.ingress.kubernetes.io/auth-tls-secret': 'pki/client-ca',
      'nginx.ingress.kubernetes.io/proxy-ssl-secret': 'a/b/c',
    },
  })));
  s.apply(ev('Ingress', 'add', ingress('foreign', { className: 'other', tls: ['foreign-tls'] })));
  const table: Array<[Secret, boolean]> = [
    [secret('web-tls'), true],
    [secret('basic-auth'), true],
    [secret('client-ca', 'pki'), true],
    [secret('client-ca'), false],
    [secret('wildcard', 'infra'), true],
    [secret('unrelated'), false],
    [secret('foreign-tls'), false],
    [secret('c', 'a'), false],
  ];
  for (const [sec, expected] of table) {
    const r = s.apply(ev('Secret', 'add', sec));
    assert.is(r.relevant, expected, `${objectKey(sec)}: ${r.reason}`);
    assert.ok(s.getSecret(objectKey(sec)), 'cached');
  }
  assert.equal(s.ingressesReferencingSecret('pki/client-ca'), ['default/web']);
  assert.equal(s.ingressesReferencingSecret('default/foreign-tls'), [], 'not served');
  assert.is(s.apply(ev('Secret', 'update', { ...secret('web-tls'), metadata: { ...secret('web-tls').metadata, resourceVersion: '2' } })).relevant, false, 'no-op update');
  assert.is(s.apply(ev('Secret', 'update', secret('web-tls', 'default', { data: { a: 'Mg==' } }))).relevant, true);
  assert.is(s.apply(ev('Secret', 'delete', secret('web-tls'))).relevant, true);
  assert.is(s.apply(ev('Secret', 'delete', secret('unrelated'))).relevant, false);
  // The reference follows the Ingress: once it stops naming the Secret, the Secret is irrelevant.
  s.apply(ev('Ingress', 'update', ingress('web', { className: 'nginx', rv: '2' })));
  assert.is(s.apply(ev('Secret', 'update', secret('basic-auth', 'default', { data: { x: 'eA==' } }))).relevant, false);
  assert.equal(s.ingressesReferencingSecret('default/basic-auth'), []);
});

relevance('Secret: Helm release Secrets are not cached', () => {
  const s = store();
  const r = s.apply(ev('Secret', 'add', secret('sh.helm.release.v1.x.v1', 'default', { type: 'helm.sh/release.v1' })));
  assert.is(r.relevant, false);
  assert.is(s.getSecret('default/sh.helm.release.v1.x.v1'), undefined);
});

relevance('ConfigMap: named by a served Ingress annotation (auth-proxy-set-headers), and only while it names it', () => {
  const s = createStore(defaultStoreOptions(), { ...TEST_REFERENCES, configMapAnnotations: ['auth-proxy-set-headers'] });
  s.apply(ev('IngressClass', 'add', OURS));
  s.apply(ev('Ingress', 'add', ingress('web', { className: 'nginx', annotations: { 'nginx.ingress.kubernetes.io/auth-proxy-set-headers': 'auth-headers' } })));
  s.apply(ev('Ingress', 'add', ingress('api', { className: 'nginx', ns: 'team-b', annotations: { 'nginx.ingress.kubernetes.io/auth-proxy-set-headers': 'sso/shared' } })));
  s.apply(ev('Ingress', 'add', ingress('foreign', { className: 'other', annotations: { 'nginx.ingress.kubernetes.io/auth-proxy-set-headers': 'theirs' } })));
  const table: Array<[ConfigMap, boolean]> = [
    [configMap('auth-headers', 'default', { 'X-A': '1' }), true],
    [configMap('shared', 'sso', { 'X-A': '1' }), true],
    [configMap('auth-headers', 'team-b'), false],
    [configMap('theirs', 'default'), false],
  ];
  for (const [cm, expected] of table) assert.is(s.apply(ev('ConfigMap', 'add', cm)).relevant, expected, objectKey(cm));
  assert.is(s.apply(ev('ConfigMap', 'update', configMap('auth-headers', 'default', { 'X-A': '2' }))).relevant, true);
  s.apply(ev('Ingress', 'update', ingress('web', { className: 'nginx', rv: '2' })));
  assert.is(s.apply(ev('ConfigMap', 'update', configMap('auth-headers', 'default', { 'X-A': '3' }))).relevant, false, 'no longer named');
  s.apply(ev('Ingress', 'delete', ingress('api', { className: 'nginx', ns: 'team-b' })));
  assert.is(s.apply(ev('ConfigMap', 'update', configMap('shared', 'sso', { 'X-A': '2' }))).relevant, false, 'its Ingress is gone');
});

relevance('ConfigMap: main, TCP/UDP, referenced by add-headers/proxy-set-headers, others cached only', () => {
  const s = store({ configmap: 'ingress-nginx/controller', tcpServicesConfigmap: 'ingress-nginx/tcp', udpServicesConfigmap: 'ingress-nginx/udp' });
  assert.equal(s.apply(ev('ConfigMap', 'add', configMap('headers', 'ingress-nginx', { 'X-A': '1' }))).relevant, false, 'not referenced yet');
  const main = s.apply(ev('ConfigMap', 'add', configMap('controller', 'ingress-nginx', { 'add-headers': 'ingress-nginx/headers', 'proxy-set-headers': 'ingress-nginx/proxy-headers' })));
  assert.equal([main.relevant, main.configmapChanged], [true, true]);
  assert.equal(s.apply(ev('ConfigMap', 'update', configMap('headers', 'ingress-nginx', { 'X-A': '2' }))).relevant, true);
  assert.equal(s.apply(ev('ConfigMap', 'add', configMap('proxy-headers', 'ingress-nginx', { 'X-B': '1' }))).relevant, true);
  const tcp = s.apply(ev('ConfigMap', 'add', configMap('tcp', 'ingress-nginx', { '9000': 'default/echo:80' })));
  assert.equal([tcp.relevant, tcp.configmapChanged ?? false], [true, false]);
  assert.is(s.apply(ev('ConfigMap', 'add', configMap('udp', 'ingress-nginx', {}))).relevant, true);
  assert.is(s.apply(ev('ConfigMap', 'add', configMap('app-config', 'default', { x: 'y' }))).relevant, false);
  assert.ok(s.getConfigMap('default/app-config'), 'cached');
  const noop = s.apply(ev('ConfigMap', 'update', { ...configMap('controller', 'ingress-nginx', { 'add-headers': 'ingress-nginx/headers', 'proxy-set-headers': 'ingress-nginx/proxy-headers' }), metadata: { name: 'controller', namespace: 'ingress-nginx', resourceVersion: '7' } }));
  assert.equal([noop.relevant, noop.configmapChanged], [false, undefined]);
  const del = s.apply(ev('ConfigMap', 'delete', configMap('controller', 'ingress-nginx')));
  assert.equal([del.relevant, del.configmapChanged], [true, true]);
  assert.is(s.apply(ev('ConfigMap', 'update', configMap('headers', 'ingress-nginx', { 'X-A': '3' }))).relevant, false, 'no longer referenced');
  const tiller = s.apply(ev('ConfigMap', 'add', configMap('release.v1', 'kube-system', {}, { OWNER: 'TILLER' })));
  assert.is(tiller.relevant, false);
  assert.is(s.getConfigMap('kube-system/release.v1'), undefined);
});

relevance('apply never throws on bad input', () => {
  const s = store({ watchIngressWithoutClass: true });
  const bad = { kind: 'Ingress', metadata: { name: 'bad', namespace: 'default' }, spec: { rules: 'nope' } } as unknown as Ingress;
  const r = s.apply(ev('Ingress', 'add', bad));
  assert.is(r.relevant, false);
  assert.ok(/error/.test(r.reason), r.reason);
  assert.is(s.apply({ kind: 'Service', type: 'add', key: 'x/y', object: null as unknown as KubeObject }).relevant, false);
  assert.is(s.apply({ kind: 'Nope' as ResourceKind, type: 'add', key: 'x', object: { metadata: { name: 'x' } } }).relevant, false);
});

// ---- normalisation

const normal = suite('store: Ingress normalisation');
normal('empty path becomes "/" and a missing pathType Prefix; the input is not mutated', () => {
  const s = store({ watchIngressWithoutClass: true });
  const raw = ingress('web');
  const p = raw.spec.rules![0]!.http!.paths[0]!;
  p.path = '';
  delete p.pathType;
  raw.spec.rules!.push({ host: 'b.example.com', http: { paths: [{ path: '/x', pathType: 'ImplementationSpecific', backend: p.backend }] } });
  const before = JSON.stringify(raw);
  s.apply(ev('Ingress', 'add', raw));
  const stored = s.getIngress('default/web')!;
  assert.equal(stored.spec.rules![0]!.http!.paths[0]!.path, '/');
  assert.equal(stored.spec.rules![0]!.http!.paths[0]!.pathType, 'Prefix');
  assert.equal(stored.spec.rules![1]!.http!.paths[0]!.pathType, 'ImplementationSpecific', 'kept: the model treats it as Prefix');
  assert.is(stored.spec.rules![1], raw.spec.rules![1], 'untouched rules are shared');
  assert.is(JSON.stringify(raw), before);
  // Re-applying the same raw object is a no-op although the stored copy differs from it.
  assert.is(s.apply(ev('Ingress', 'update', raw)).relevant, false);
  assert.is(s.getIngress('default/web'), stored);
});
normal('an already normal Ingress is stored as it is', () => {
  const ing = ingress('web');
  assert.is(normaliseIngress(ing), ing);
  const noSpec = { kind: 'Ingress', metadata: { name: 'x' } } as unknown as Ingress;
  assert.equal(normaliseIngress(noSpec).spec, {});
});

// ---- order

const order = suite('store: listIngresses order');
order('oldest first; equal timestamps: namespace/name greater first', () => {
  const s = store({ watchIngressWithoutClass: true });
  s.apply(ev('Ingress', 'add', ingress('new', { created: '2024-05-01T00:00:00Z' })));
  s.apply(ev('Ingress', 'add', ingress('a', { created: '2024-01-01T00:00:00Z' })));
  s.apply(ev('Ingress', 'add', ingress('b', { created: '2024-01-01T00:00:00Z' })));
  s.apply(ev('Ingress', 'add', ingress('a', { ns: 'zeta', created: '2024-01-01T00:00:00Z' })));
  s.apply(ev('Ingress', 'add', ingress('old', { created: '2023-06-01T12:00:00.5Z' })));
  s.apply(ev('Ingress', 'add', ingress('older-by-format', { created: '2023-06-01T12:00:00Z' })));
  assert.equal(served(s), ['default/older-by-format', 'default/old', 'zeta/a', 'default/b', 'default/a', 'default/new']);
});
order('the sorted list is cached until an Ingress changes', () => {
  const s = store({ watchIngressWithoutClass: true });
  s.apply(ev('Ingress', 'add', ingress('a')));
  const first = s.listIngresses();
  assert.is(s.listIngresses(), first);
  s.apply(ev('EndpointSlice', 'add', slice('x', 'svc', ['10.0.0.1'])));
  s.apply(ev('Ingress', 'update', ingress('a', { rv: '2' })));
  assert.is(s.listIngresses(), first, 'no-op update');
  s.apply(ev('Ingress', 'add', ingress('foreign', { annotations: { 'kubernetes.io/ingress.class': 'other' } })));
  assert.is(s.listIngresses(), first, 'an unserved Ingress does not invalidate');
  s.apply(ev('Ingress', 'add', ingress('b')));
  const second = s.listIngresses();
  assert.is.not(second, first);
  assert.equal(second.map(objectKey), ['default/b', 'default/a']);
  assert.ok(Object.isFrozen(second));
});

order('an update that keeps the creation time replaces the Ingress in place; a new time re-sorts', () => {
  const s = store({ watchIngressWithoutClass: true });
  s.apply(ev('Ingress', 'add', ingress('a', { created: '2024-01-01T00:00:00Z' })));
  s.apply(ev('Ingress', 'add', ingress('b', { created: '2024-02-01T00:00:00Z' })));
  s.apply(ev('Ingress', 'add', ingress('c', { created: '2024-03-01T00:00:00Z' })));
  const before = s.listIngresses();
  s.apply(ev('Ingress', 'update', ingress('b', { created: '2024-02-01T00:00:00Z', path: '/changed' })));
  const after = s.listIngresses();
  assert.equal(after.map(objectKey), ['default/a', 'default/b', 'default/c']);
  assert.is(after[1], s.getIngress('default/b'), 'the new object is listed');
  assert.is(after[0], before[0]);
  assert.ok(Object.isFrozen(after));
  assert.is(before[1]!.spec.rules![0]!.http!.paths[0]!.path, '/', 'a list handed out earlier is not mutated');
  s.apply(ev('Ingress', 'update', ingress('b', { created: '2025-01-01T00:00:00Z', path: '/changed' })));
  assert.equal(s.listIngresses().map(objectKey), ['default/a', 'default/c', 'default/b']);
});

order('kept one change at a time, the order is the one a fresh store sorts (random adds, changes, deletes, class and namespace moves)', () => {
  let seed = 29;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const s = store({ watchNamespaceSelector: 'served=yes' });
  const namespaces = ['a', 'b', 'c'];
  const nsServed = new Map(namespaces.map((n) => [n, true]));
  const setNamespace = (name: string, on: boolean) => {
    nsServed.set(name, on);
    s.apply(ev('Namespace', 'update', { kind: 'Namespace', metadata: { name, resourceVersion: '1', labels: { served: on ? 'yes' : 'no' } } } as Namespace));
  };
  for (const n of namespaces) setNamespace(n, true);
  s.apply(ev('IngressClass', 'add', OURS));
  const current = new Map<string, Ingress>();
  s.listIngresses(); // the order is kept from the first list on
  for (let step = 0; step < 3000; step++) {
    const name = `i${rand(60)}`;
    const ns = namespaces[rand(3)]!;
    const key = `${ns}/${name}`;
    const roll = rand(100);
    if (roll < 3) {
      setNamespace(namespaces[rand(3)]!, rand(2) === 0);
    } else if (roll < 25 && current.has(key)) {
      s.apply(ev('Ingress', 'delete', current.get(key)!));
      current.delete(key);
    } else {
      // Few distinct creation times, so ties (ordered by key) are common.
      const created = new Date(Date.UTC(2024, 0, 1 + rand(5))).toISOString();
      const ing = ingress(name, { ns, created, rv: String(step), path: `/p${rand(4)}`, className: rand(10) === 0 ? 'other' : 'nginx' });
      s.apply(ev('Ingress', current.has(key) ? 'update' : 'add', ing));
      current.set(key, ing);
    }
    if (rand(10) === 0 || step === 2999) {
      const fresh = store({ watchNamespaceSelector: 'served=yes' });
      for (const n of namespaces) fresh.apply(ev('Namespace', 'add', { kind: 'Namespace', metadata: { name: n, resourceVersion: '1', labels: { served: nsServed.get(n) ? 'yes' : 'no' } } } as Namespace));
      fresh.apply(ev('IngressClass', 'add', OURS));
      for (const ing of current.values()) fresh.apply(ev('Ingress', 'add', ing));
      const kept = s.listIngresses();
      assert.equal(kept.map(objectKey), served(fresh), `step ${step}`);
      for (const ing of kept) assert.is(ing, s.getIngress(objectKey(ing)), 'the stored object is listed');
    }
  }
});

// ---- scale

const scale = suite('store: 10,000 Ingresses');
scale('holds 10,000 Ingresses with their Secret and EndpointSlice indexes (timed in bench/, not here)', () => {
  const s = store();
  s.apply(ev('IngressClass', 'add', OURS));
  const n = 10_000;
  for (let i = 0; i < n; i++) {
    const created = new Date(Date.UTC(2024, 0, 1) + (i % 500) * 1000).toISOString();
    s.apply(ev('Ingress', 'add', ingress(`web-${i}`, { ns: `ns-${i % 100}`, className: 'nginx', tls: [`tls-${i}`], created })));
  }
  for (let i = 0; i < n; i++) {
    assert.is(s.apply(ev('Secret', 'add', secret(`tls-${i}`, `ns-${i % 100}`))).relevant, true);
    s.apply(ev('EndpointSlice', 'add', slice(`svc-${i}-x`, `svc-${i}`, ['10.0.0.1'], { ns: `ns-${i % 100}` })));
  }
  const list = s.listIngresses();
  assert.is(list.length, n);
  assert.is(s.getEndpointSlices('ns-7/svc-7').length, 1);
  // IngressClass deletion re-evaluates exactly the Ingresses naming it.
  assert.is(s.apply(ev('IngressClass', 'delete', OURS)).relevant, true);
  assert.is(s.listIngresses().length, 0);
});

classes.run();
namespaces.run();
selectors.run();
catchAll.run();
relevance.run();
normal.run();
order.run();
scale.run();
