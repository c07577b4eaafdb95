// ingress-nginx test/e2e/settings/ingress_class.go, ported against the fake API server: which
// Ingresses a controller serves by spec.ingressClassName (an IngressClass of its
// --controller-class), the kubernetes.io/ingress.class annotation (equal to --ingress-class),
// neither (only with --watch-ingress-without-class), and what a change of class does to a served
// Ingress. Each context of the e2e file has its flags: here a controller each, watching a
// namespace of its own on one fake API server. Every It runs once per protocol on hosts of its
// own (the protocol's tag in the name), as its Ingresses change.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ingressClass, startClusterFixture, type ClusterFixture } from '../fixture.js';
import { ingressNginxManifests, NAMESPACE } from '../../../support/ingress-nginx-manifests.js';
import type { FakeObject } from '../../../support/fake-apiserver.js';
import { ported } from '../port.js';
import { ingress, type CliProcess } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';

const CLASS_ANNOTATION = 'kubernetes.io/ingress.class';
/** The IngressClass of the e2e framework's controller (its --controller-class is the default). */
const OWN_CLASS = 'ic-conformance';
/** The IngressClass of another controller, as the e2e file creates it. */
const OTHER_CLASS = 'test-new-ingress-class';
const OTHER_CONTROLLER = 'k8s.io/other-class';

let cluster: ClusterFixture;
/** Its own API server, where RBAC applies and the controller's ServiceAccount may not read IngressClasses. */
let restricted: ClusterFixture;
const ctl: Record<'defaults' | 'flags' | 'withoutClass' | 'byName' | 'noPermission', CliProcess | undefined> = {
  defaults: undefined, flags: undefined, withoutClass: undefined, byName: undefined, noPermission: undefined,
};
const NS = { defaults: 'ic-default', flags: 'ic-flags', withoutClass: 'ic-without-class', byName: 'ic-by-name', noPermission: 'ic-no-permission' } as const;
const defaults = ported(test, () => ctl.defaults!);
const flags = ported(test, () => ctl.flags!);
const withoutClass = ported(test, () => ctl.withoutClass!);
const byName = ported(test, () => ctl.byName!);
const noPermission = ported(test, () => ctl.noPermission!);
const SERVICE_ACCOUNT = `system:serviceaccount:${NAMESPACE}:ingress-nginx`;
const ingressClassObjects = [ingressClass(OWN_CLASS), ingressClass(OTHER_CLASS, OTHER_CONTROLLER)];

/** ingress-nginx's RBAC without the IngressClass permission (the e2e test binds it to another ServiceAccount). */
async function startRestricted(): Promise<ClusterFixture> {
  const c = await startClusterFixture({ api: { tokens: { 'sa-token': SERVICE_ACCOUNT }, rbac: true }, podNamespace: NAMESPACE, firstAddress: '127.0.9.2' });
  for (const o of ingressNginxManifests('ingress-rx')) {
    const rules = (o as { rules?: Array<{ resources: string[] }> }).rules;
    c.fake.create((rules ? { ...o, rules: rules.filter((r) => !r.resources.includes('ingressclasses')) } : o) as FakeObject);
  }
  for (const ic of ingressClassObjects) c.fake.create(ic);
  c.echoService(NS.noPermission);
  ctl.noPermission = await c.controller([`--watch-namespace=${NS.noPermission}`, '--ingress-class=testclass', '--election-id=ingress-nginx-leader']);
  return c;
}

test.before(async () => {
  cluster = await startClusterFixture();
  for (const ic of ingressClassObjects) cluster.fake.create(ic);
  for (const ns of [NS.defaults, NS.flags, NS.withoutClass, NS.byName]) cluster.echoService(ns);
  // One after the other: each start compiles and loads the controller, which on a busy machine
  // takes most of a core.
  const watching = (ns: string, ...args: string[]) => cluster.controller([`--watch-namespace=${ns}`, ...args]);
  ctl.defaults = await watching(NS.defaults);
  ctl.flags = await watching(NS.flags, '--ingress-class=testclass', `--controller-class=${OTHER_CONTROLLER}`);
  ctl.withoutClass = await watching(NS.withoutClass, '--watch-ingress-without-class');
  ctl.byName = await watching(NS.byName, `--ingress-class=${OTHER_CLASS}`, '--ingress-class-by-name');
  restricted = await startRestricted();
});
test.after(async () => { await Promise.all([cluster?.stop(), restricted?.stop()]); });

type Class = { className?: string; annotation?: string };

/** An Ingress named as its host (`host` → the echo Service) with the class given, created or replaced. */
function put(ns: string, host: string, cls: Class): void {
  (ns === NS.noPermission ? restricted : cluster).fake.set(ingress(ns, host, {
    host, paths: [{ path: '/', service: 'echo' }],
    ...(cls.className ? { className: cls.className } : {}),
    annotations: cls.annotation === undefined ? {} : { [CLASS_ANNOTATION]: cls.annotation },
  }));
}

/** `name` as a host of this protocol's run. */
const h = (p: ProtocolClient, name: string) => `${name}.${p.tag}.test`;

const served = (p: ProtocolClient, host: string) => p.until(host, '/', (r) => r.status === 200, { what: `${host} served` });
const notServed = (p: ProtocolClient, host: string) => p.until(host, '/', (r) => r.status === 404, { what: `${host} not served` });

/**
 * `ignored` is written before `accepted`: once the controller serves `accepted` it has read
 * `ignored` too, so its 404 is a decision, not a delay.
 */
async function ignoredThenServed(p: ProtocolClient, ns: string, ignored: Array<[string, Class]>, accepted: Array<[string, Class]>): Promise<void> {
  for (const [host, cls] of ignored) put(ns, host, cls);
  for (const [host, cls] of accepted) put(ns, host, cls);
  for (const [host] of accepted) await served(p, host);
  for (const [host] of ignored) assert.is((await p.request(host, '/')).status, 404, `${host} is not this controller's`);
}

defaults.both('settings/ingress_class.go:70', async (p) => {
  await ignoredThenServed(p, NS.defaults, [[h(p, 'foo'), { annotation: 'testclass' }]], [[h(p, 'bar'), { annotation: 'nginx' }]]);
});

defaults.both('settings/ingress_class.go:106', async (p) => {
  await ignoredThenServed(p, NS.defaults, [[h(p, 'foo-1'), { className: OTHER_CLASS }]], [[h(p, 'bar-1'), { className: OWN_CLASS }]]);
});

defaults.both('settings/ingress_class.go:134', async (p) => {
  await ignoredThenServed(p, NS.defaults, [], [[h(p, 'foo-ok'), { annotation: 'nginx' }], [h(p, 'bar-ok'), { className: OWN_CLASS }]]);
});

defaults.both('settings/ingress_class.go:166', async (p) => {
  await ignoredThenServed(p, NS.defaults, [[h(p, 'foo-invalid'), {}]], [[h(p, 'bar-valid'), { className: OWN_CLASS }]]);
});

defaults.both('settings/ingress_class.go:194', async (p) => {
  const [byAnnotation, byClass] = [h(p, 'foo-annotation'), h(p, 'foo-class')];
  await ignoredThenServed(p, NS.defaults, [], [[byAnnotation, { annotation: 'nginx' }], [byClass, { className: OWN_CLASS }]]);
  put(NS.defaults, byAnnotation, {});
  put(NS.defaults, byClass, {});
  await notServed(p, byAnnotation);
  await notServed(p, byClass);
});

defaults.both('settings/ingress_class.go:259', async (p) => {
  const [noAnnotation, noClass] = [h(p, 'foo-no-annotation'), h(p, 'foo-no-class')];
  const marker = h(p, 'foo-marker');
  await ignoredThenServed(p, NS.defaults, [[noAnnotation, {}], [noClass, {}]], [[marker, { className: OWN_CLASS }]]);
  put(NS.defaults, noAnnotation, { annotation: 'nginx' });
  put(NS.defaults, noClass, { className: OWN_CLASS });
  await served(p, noAnnotation);
  await served(p, noClass);
});

defaults.both('settings/ingress_class.go:325', async (p) => {
  const [annotationToClass, classToAnnotation] = [h(p, 'foo-annotation2class'), h(p, 'foo-class2annotation')];
  await ignoredThenServed(p, NS.defaults, [], [[annotationToClass, { annotation: 'nginx' }], [classToAnnotation, { className: OWN_CLASS }]]);
  put(NS.defaults, annotationToClass, { className: OWN_CLASS });
  put(NS.defaults, classToAnnotation, { annotation: 'nginx' });
  // The change reaches NGINX as a sync that serves both again; a marker written after them
  // shows the sync happened before the hosts are asked.
  const marker = h(p, 'foo-switch-marker');
  put(NS.defaults, marker, { className: OWN_CLASS });
  await served(p, marker);
  await served(p, annotationToClass);
  await served(p, classToAnnotation);
});

flags.both('settings/ingress_class.go:414', async (p) => {
  await ignoredThenServed(p, NS.flags, [[h(p, 'bar'), {}]], [[h(p, 'foo'), { annotation: 'testclass' }], [h(p, 'foobar123'), { className: OTHER_CLASS }]]);
});

withoutClass.both('settings/ingress_class.go:482', async (p) => {
  await ignoredThenServed(p, NS.withoutClass, [[h(p, 'foo'), { annotation: 'testclass123' }]], [[h(p, 'bar'), {}]]);
});

byName.both('settings/ingress_class.go:538', async (p) => {
  await ignoredThenServed(p, NS.byName, [[h(p, 'invalidannotation'), { annotation: 'testclass123' }]], [
    [h(p, 'validhostclassname'), { className: OTHER_CLASS }],
    [h(p, 'validhostclassspec'), { className: OWN_CLASS }],
  ]);
});

noPermission.both('settings/ingress_class.go:628', async (p) => {
  await ignoredThenServed(p, NS.noPermission, [], [[h(p, 'foo'), { annotation: 'testclass' }]]);
  assert.ok(restricted.fake.requests.some((r) => r.status === 403 && r.path.endsWith('/ingressclasses')), 'the IngressClasses were refused');
});

noPermission.both('settings/ingress_class.go:648', async (p) => {
  await ignoredThenServed(p, NS.noPermission, [[h(p, 'noclassforyou'), { className: OWN_CLASS }]], [[h(p, 'marker'), { annotation: 'testclass' }]]);
  assert.match(ctl.noPermission!.output(), 'no permission to list IngressClasses');
});

test.run();
