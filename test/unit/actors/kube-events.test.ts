// Kubernetes Events against the fake API server: ingress-nginx's RELOAD events, Warnings on
// invalid Ingresses, repeats aggregated into a count, and a storm held to the per-object burst.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { VirtualTimeScheduler } from 'rxjs';
import { CoreV1Api } from '@kubernetes/client-node';
import { startFakeApiServer, type FakeApiServer, type FakeObject } from '../../support/fake-apiserver.js';
import { silentLogger } from '../../../src/log.js';
import type { Ingress } from '../../../src/store/kube-types.js';
import {
  createEventRecorder, podObject, recordInvalidIngress, recordReload, type EventRecorderDeps,
} from '../../../src/actors/kube-events.js';

const POD = podObject({ name: 'ctrl-a', namespace: 'ingress-rx', uid: 'pod-uid' });
const ING: Ingress = { metadata: { name: 'shop', namespace: 'apps', uid: 'ing-uid', resourceVersion: '7' }, spec: {} };

type EventObject = FakeObject & { involvedObject: Record<string, string>; type: string; reason: string; message: string; count: number; source: Record<string, string> };

function events(fake: FakeApiServer, namespace?: string): EventObject[] {
  return fake.list('v1', 'Event', namespace) as EventObject[];
}

function recorder(fake: FakeApiServer, over: Partial<EventRecorderDeps> = {}) {
  return createEventRecorder({ core: fake.kubeConfig().makeApiClient(CoreV1Api), logger: silentLogger(), host: 'ctrl-a', ...over });
}

test('a reload is a Normal RELOAD event on the controller pod, a failed one a Warning', async () => {
  const fake = await startFakeApiServer();
  try {
    const rec = recorder(fake);
    recordReload(rec, POD);
    recordReload(rec, POD, 'nginx: [emerg] unknown directive "bogus"');
    await rec.flush();
    const [ok, failed] = events(fake, 'ingress-rx').sort((a, b) => a.type.localeCompare(b.type));
    assert.equal(ok!.involvedObject, { apiVersion: 'v1', kind: 'Pod', name: 'ctrl-a', namespace: 'ingress-rx', uid: 'pod-uid' });
    assert.is(ok!.type, 'Normal');
    assert.is(ok!.reason, 'RELOAD');
    assert.is(ok!.message, 'NGINX reload triggered due to a change in configuration');
    assert.is(ok!.count, 1);
    assert.equal(ok!.source, { component: 'nginx-ingress-controller', host: 'ctrl-a' });
    assert.is(failed!.type, 'Warning');
    assert.is(failed!.message, 'Error reloading NGINX: nginx: [emerg] unknown directive "bogus"');
  } finally {
    await fake.close();
  }
});

test('an invalid Ingress gets a Warning in its own namespace', async () => {
  const fake = await startFakeApiServer();
  try {
    const rec = recorder(fake);
    recordInvalidIngress(rec, ING, 'annotation nginx.ingress.kubernetes.io/proxy-body-size: "ten" is not a size');
    await rec.flush();
    const [e] = events(fake, 'apps');
    assert.is(e!.involvedObject.kind, 'Ingress');
    assert.is(e!.involvedObject.name, 'shop');
    assert.is(e!.involvedObject.uid, 'ing-uid');
    assert.is(e!.type, 'Warning');
    assert.is(e!.reason, 'Invalid');
    assert.match(e!.message, 'proxy-body-size');
  } finally {
    await fake.close();
  }
});

test('a repeated event is one Event whose count grows (create once, then patches)', async () => {
  const fake = await startFakeApiServer();
  try {
    const rec = recorder(fake);
    for (let i = 0; i < 5; i++) recordReload(rec, POD);
    await rec.flush();
    assert.is(events(fake).length, 1);
    assert.is(events(fake)[0]!.count, 5);
    assert.is(fake.count({ verb: 'create', path: '/events' }), 1);
    assert.is(fake.count({ verb: 'patch', path: '/events/' }), 4);
  } finally {
    await fake.close();
  }
});

test('when the aggregated Event is gone from the server, a new one is created', async () => {
  const fake = await startFakeApiServer();
  try {
    const rec = recorder(fake);
    recordReload(rec, POD);
    await rec.flush();
    const [first] = events(fake);
    fake.delete('v1', 'Event', first!.metadata.name, 'ingress-rx');
    recordReload(rec, POD);
    await rec.flush();
    const now = events(fake);
    assert.is(now.length, 1);
    assert.is.not(now[0]!.metadata.name, first!.metadata.name);
    assert.is(now[0]!.count, 1);
  } finally {
    await fake.close();
  }
});

test('a storm on one object costs at most its burst of API calls; tokens come back with time', async () => {
  const fake = await startFakeApiServer();
  const scheduler = new VirtualTimeScheduler();
  const advance = (ms: number) => { scheduler.schedule(() => {}, ms); scheduler.flush(); };
  try {
    const rec = recorder(fake, { scheduler, burst: 25, refillMs: 300_000 });
    for (let i = 0; i < 100; i++) recordInvalidIngress(rec, ING, `problem ${i}`);
    recordReload(rec, POD); // another object has its own bucket
    await rec.flush();
    assert.is(fake.count({ verb: 'create', path: '/events' }), 26);
    assert.is(rec.dropped, 75);

    recordInvalidIngress(rec, ING, 'still throttled');
    await rec.flush();
    assert.is(fake.count({ verb: 'create', path: '/events' }), 26);

    advance(2 * 300_000);
    for (let i = 0; i < 5; i++) recordInvalidIngress(rec, ING, `after refill ${i}`);
    await rec.flush();
    assert.is(fake.count({ verb: 'create', path: '/events' }), 28, 'two tokens earned in ten minutes');
  } finally {
    await fake.close();
  }
});

test('an API failure is logged, not thrown, and later events still go out', async () => {
  const fake = await startFakeApiServer();
  try {
    const rec = recorder(fake);
    fake.failNext(1, 500, (r) => r.verb === 'create');
    recordReload(rec, POD, 'first');
    recordReload(rec, POD, 'second');
    await rec.flush();
    assert.equal(events(fake).map((e) => e.message), ['Error reloading NGINX: second']);
  } finally {
    await fake.close();
  }
});

test.run();
