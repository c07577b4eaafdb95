// The sync actor under virtual time: its decisions (nothing, dynamic, reload), what it tells the
// model build, and its running state across failed reloads and POSTs.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject, of, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { createPipeline } from '../../../src/pipeline/pipeline.js';
import { createSyncer, type SyncResult, type ActorOutcome } from '../../../src/actors/sync.js';
import { EMPTY_UID, type DynamicUpdate } from '../../../src/model/core/payload.js';
import type { RouteEntry, RoutesPayload } from '../../../src/model/core/routes-payload.js';
import type { Backend, Configuration } from '../../../src/model/core/types.js';
import type { PipelineInput } from '../../../src/store/events.js';
import type { SyncBatch } from '../../../src/streams/hooks.js';
import { ev, memoryStore, newScheduler } from '../../support/pipeline-harness.js';

const fakeConfig = (v: string) => ({ servers: [], backends: [], tcpEndpoints: [], udpEndpoints: [], certificates: {}, defaultCertificate: null, settings: { v } }) as unknown as Configuration;

function syncHarness(s: TestScheduler, opts: { reloadOk?: () => boolean; dynamicOk?: () => boolean } = {}) {
  let model = { structure: 'a', endpoints: '1', dicts: 'configuration_data 20m' };
  const calls: string[] = [];
  const hints: unknown[] = [];
  const syncer = createSyncer<{ structure: string; endpoints: string }>({
    scheduler: s,
    build: (changes) => { hints.push(changes); return { config: fakeConfig(model.structure), warnings: [] }; },
    snapshot: () => ({ ...model }),
    decide: (running, next) => {
      if (!running) return { kind: 'reload', reason: 'first', backendsChanged: true, serversChanged: true, routesChanged: false, l4EndpointsChanged: false };
      const structural = running.structure !== next.structure;
      const eps = running.endpoints !== next.endpoints;
      return { kind: structural ? 'reload' : eps ? 'dynamic' : 'none', reason: structural ? 'structure' : eps ? 'endpoints' : 'same', backendsChanged: eps, serversChanged: false, routesChanged: false, l4EndpointsChanged: false };
    },
    backendsPayload: () => [{ name: model.endpoints } as Backend],
    serversPayload: () => ({ certificates: {}, servers: {} }),
    reload: (): Observable<ActorOutcome> => {
      calls.push('reload');
      return of(opts.reloadOk?.() ?? true ? { ok: true, checksum: `conf-${model.structure}` } : { ok: false });
    },
    dynamic: (u: DynamicUpdate): Observable<ActorOutcome> => { calls.push(`post:${Object.keys(u).join('+')}`); return of({ ok: opts.dynamicOk?.() ?? true }); },
    sharedDicts: () => model.dicts,
  });
  let n = 0;
  const run = (items: SyncBatch['items'] = [], lossy = false) => {
    let out: SyncResult | undefined;
    syncer({ n: ++n, t: s.now(), items, ...(lossy ? { lossy } : {}) }).subscribe((r) => { out = r; });
    return out!;
  };
  return { calls, hints, run, set: (m: Partial<typeof model>) => { model = { ...model, ...m }; } };
}

const actor = suite('sync actor');

actor('first sync reloads and posts everything; then endpoints-only is dynamic; structure reloads', () => {
  const s = newScheduler();
  const h = syncHarness(s);
  assert.is(h.run().decision, 'reload');
  assert.equal(h.calls, ['reload', 'post:backends+servers']);
  assert.is(h.run().decision, 'none');
  h.set({ endpoints: '2' });
  const dyn = h.run();
  assert.is(dyn.decision, 'dynamic');
  assert.equal(dyn.posted, ['backends']);
  h.set({ structure: 'b' });
  assert.is(h.run().decision, 'reload');
  assert.equal(h.calls, ['reload', 'post:backends+servers', 'post:backends', 'reload']);
});

actor("a result's checksum is the running nginx.conf's: set by each reload, kept by dynamic syncs and failed reloads", () => {
  const s = newScheduler();
  let ok = true;
  const h = syncHarness(s, { reloadOk: () => ok });
  assert.is(h.run().checksum, 'conf-a');
  h.set({ endpoints: '2' });
  assert.is(h.run().checksum, 'conf-a');
  h.set({ structure: 'b' });
  assert.is(h.run().checksum, 'conf-b');
  ok = false;
  h.set({ structure: 'c' });
  const failed = h.run();
  assert.is(failed.applied, false);
  assert.is(failed.checksum, 'conf-b');
});

actor('the build is told which objects a batch changed; nothing when the batch holds a task or follows ring drops', () => {
  const s = newScheduler();
  const h = syncHarness(s);
  const ev = (id: number, key: string) => ({ id, t: 0, skippable: true, input: { kind: 'EndpointSlice' as const, type: 'update' as const, key, object: { metadata: {} } } }) as SyncBatch['items'][number];
  h.run([ev(1, 'ns/a'), ev(2, 'ns/b')]);
  h.run([ev(3, 'ns/c'), { id: 4, t: 0, skippable: false, input: { kind: 'task', task: 'template-change' } } as SyncBatch['items'][number]]);
  h.run([ev(5, 'ns/d'), ev(6, 'ns/e')], true); // the ring dropped events before this batch: unknown
  h.run([ev(7, 'ns/f'), ev(8, 'ns/g'), ev(9, 'ns/h'), ev(10, 'ns/i')]);
  assert.equal(h.hints, [
    [{ kind: 'EndpointSlice', key: 'ns/a' }, { kind: 'EndpointSlice', key: 'ns/b' }], undefined, undefined,
    ['ns/f', 'ns/g', 'ns/h', 'ns/i'].map((key) => ({ kind: 'EndpointSlice', key })),
  ]);
});

actor('a reload that resizes the Lua shared dictionaries posts everything again (NGINX gave them new, empty zones)', () => {
  const s = newScheduler();
  const h = syncHarness(s);
  h.run();
  h.set({ structure: 'b' });
  h.run();
  assert.equal(h.calls, ['reload', 'post:backends+servers', 'reload'], 'same dictionaries: nothing to post');
  h.set({ structure: 'c', dicts: 'configuration_data 60m' });
  const r = h.run();
  assert.equal(r.posted, ['backends', 'servers']);
  assert.equal(h.calls.slice(3), ['reload', 'post:backends+servers']);
});

actor('a failed reload does not advance the running state: the next sync reloads again', () => {
  const s = newScheduler();
  let ok = false;
  const h = syncHarness(s, { reloadOk: () => ok });
  const r1 = h.run();
  assert.is(r1.applied, false);
  assert.equal(h.calls, ['reload']); // no POST after a failed reload
  ok = true;
  const r2 = h.run();
  assert.is(r2.decision, 'reload');
  assert.is(r2.applied, true);
});

actor('a failed POST after a good reload re-posts without reloading again', () => {
  const s = newScheduler();
  let ok = false;
  const h = syncHarness(s, { dynamicOk: () => ok });
  assert.is(h.run().applied, false);
  ok = true;
  const r = h.run();
  assert.is(r.decision, 'dynamic');
  assert.equal(h.calls, ['reload', 'post:backends+servers', 'post:backends+servers']);
});

actor('template-change forces a reload of an unchanged model; nginx-restart re-applies all', () => {
  const s = newScheduler();
  const h = syncHarness(s);
  h.run();
  const tpl = h.run([{ id: 1, t: 0, skippable: false, input: { kind: 'task', task: 'template-change', detail: 'nginx.tmpl' } }]);
  assert.is(tpl.decision, 'reload');
  assert.match(tpl.reason, /template-change/);
  const restart = h.run([{ id: 2, t: 0, skippable: false, input: { kind: 'task', task: 'nginx-restart' } }]);
  assert.is(restart.decision, 'reload');
  assert.equal(h.calls.slice(-2), ['reload', 'post:backends+servers']);
});

actor('a throwing model build becomes a failed result, and the pipeline retries it', () => {
  const s = newScheduler();
  s.run(({ flush }) => {
    const store = memoryStore();
    const inputs = new Subject<PipelineInput>();
    let fail = true;
    const results: SyncResult[] = [];
    const syncer = createSyncer<string>({
      scheduler: s,
      build: () => { if (fail) { fail = false; throw new Error('boom'); } return { config: fakeConfig('x'), warnings: [] }; },
      snapshot: () => 'x',
      decide: (r) => ({ kind: r ? 'none' : 'reload', reason: '', backendsChanged: !r, serversChanged: !r, routesChanged: false, l4EndpointsChanged: false }),
      backendsPayload: () => [], serversPayload: () => ({ certificates: {}, servers: {} }),
      reload: () => of({ ok: true }), dynamic: () => of({ ok: true }),
    });
    createPipeline({ inputs, store, scheduler: s, sync: syncer }).subscribe((r) => results.push(r));
    s.schedule(() => inputs.next(ev('default/a', 1)), 0);
    flush();
    assert.is(results.length, 2);
    assert.is(results[0].error, 'boom');
    assert.is(results[1].applied, true);
    assert.is(results[1].t, 3334); // the retry waited for the next token
  });
});

actor('a reload that moves hosts into the route table posts them first beside the held table; hosts that leave or name a new backend wait for the reload', () => {
  const s = newScheduler();
  const entries = (backend: string) => [{ backend, fallback: '' }] as unknown as readonly RouteEntry[];
  const old = entries('web');
  let structure = 'a';
  let routes: RoutesPayload = { hosts: { 'old.test': old } };
  const calls: string[] = [];
  const posted: DynamicUpdate[] = [];
  const syncer = createSyncer<{ structure: string; routes: RoutesPayload }>({
    scheduler: s,
    build: () => ({ config: fakeConfig(structure), warnings: [] }),
    snapshot: () => ({ structure, routes }),
    decide: (running, next) => ({
      kind: running === null || running.structure !== next.structure ? 'reload' : 'none', reason: 'structure',
      backendsChanged: running === null, serversChanged: running === null, routesChanged: running?.routes !== next.routes, l4EndpointsChanged: false,
    }),
    backendsPayload: () => [{ name: 'web' } as Backend],
    serversPayload: () => ({ certificates: {}, servers: {} }),
    routesPayload: () => routes,
    reload: (): Observable<ActorOutcome> => { calls.push('reload'); return of({ ok: true, checksum: `conf-${structure}` }); },
    dynamic: (u: DynamicUpdate): Observable<ActorOutcome> => { calls.push(`post:${Object.keys(u).join('+')}`); posted.push(u); return of({ ok: true }); },
  });
  let n = 0;
  const run = () => { let out: SyncResult | undefined; syncer({ n: ++n, t: s.now(), items: [] }).subscribe((r) => { out = r; }); return out!; };
  assert.ok(run().applied);
  assert.equal(calls, ['reload', 'post:backends+servers+routes']);

  // moved.test loses its server block in this reload; fresh.test names a backend Lua does not hold yet.
  const moved = entries('web');
  structure = 'b';
  routes = { hosts: { 'old.test': old, 'moved.test': moved, 'fresh.test': entries('new-svc') } };
  assert.ok(run().applied);
  assert.equal(calls.slice(2), ['post:routes', 'reload', 'post:routes']);
  assert.equal(Object.keys(posted[1]!.routes!.hosts).sort(), ['moved.test', 'old.test'], 'before the reload: the held table and the moved host');
  assert.equal(Object.keys(posted[2]!.routes!.hosts).sort(), ['fresh.test', 'moved.test', 'old.test'], 'after it: the whole table');

  // A reload after which a host leaves the table adds nothing before it.
  structure = 'c';
  routes = { hosts: { 'moved.test': moved } };
  assert.ok(run().applied);
  assert.equal(calls.slice(5), ['reload', 'post:routes']);
});

actor('certificates go as a change to the map NGINX accepted last: a new plain host posts none, a TLS host its entry and PEM, a host gone its EMPTY_UID; whole again after a failure-free restart of NGINX', () => {
  const s = newScheduler();
  let hosts: Record<string, string> = { 'a.test': 'u1', 'b.test': EMPTY_UID };
  let restart = false;
  const pems: Record<string, string> = { u1: 'PEM1', u2: 'PEM2' };
  const posts: DynamicUpdate[] = [];
  const syncer = createSyncer<{ hosts: string }>({
    scheduler: s,
    build: () => ({ config: fakeConfig('a'), warnings: [] }),
    snapshot: () => ({ hosts: JSON.stringify(hosts) }),
    decide: (running, next) => (running
      ? { kind: running.hosts === next.hosts ? 'none' : 'dynamic', reason: 'hosts', backendsChanged: false, serversChanged: running.hosts !== next.hosts, routesChanged: false, l4EndpointsChanged: false }
      : { kind: 'reload', reason: 'first', backendsChanged: false, serversChanged: true, routesChanged: false, l4EndpointsChanged: false }),
    backendsPayload: () => [],
    serversPayload: () => ({
      certificates: Object.fromEntries(Object.values(hosts).filter((u) => pems[u]).map((u) => [u, pems[u]!])), servers: { ...hosts }, complete: true,
    }),
    reload: () => of({ ok: true }),
    dynamic: (u) => { posts.push(u); return of({ ok: true }); },
  });
  let n = 0;
  const run = () => {
    let out: SyncResult | undefined;
    const items = restart ? [{ id: n, t: 0, skippable: false, input: { kind: 'task' as const, task: 'nginx-restart' as const } }] : [];
    syncer({ n: ++n, t: s.now(), items }).subscribe((r) => { out = r; });
    restart = false;
    return out!;
  };
  run();
  assert.equal(posts.at(-1)?.servers, { certificates: { u1: 'PEM1' }, servers: { 'a.test': 'u1', 'b.test': EMPTY_UID }, complete: true }, 'the first POST is the whole map');
  hosts = { ...hosts, 'c.test': EMPTY_UID };
  const plain = run();
  assert.is(plain.decision, 'none', 'a host without a certificate changes nothing Lua holds');
  assert.is(posts.length, 1);
  hosts = { ...hosts, 'd.test': 'u2' };
  assert.equal(run().posted, ['servers']);
  assert.equal(posts.at(-1)?.servers, { certificates: { u2: 'PEM2' }, servers: { 'd.test': 'u2' } }, 'the new TLS host and its PEM only, not complete');
  hosts = { 'b.test': EMPTY_UID, 'c.test': EMPTY_UID, 'd.test': 'u1' };
  run();
  assert.equal(posts.at(-1)?.servers, { certificates: { u1: 'PEM1' }, servers: { 'd.test': 'u1', 'a.test': EMPTY_UID } }, 'a changed uid names its PEM; a host gone is forgotten');
  restart = true;
  hosts = { ...hosts, 'e.test': EMPTY_UID };
  run();
  assert.equal(posts.at(-1)?.servers, { certificates: { u1: 'PEM1' }, servers: { 'b.test': EMPTY_UID, 'c.test': EMPTY_UID, 'd.test': 'u1', 'e.test': EMPTY_UID }, complete: true }, 'a restarted NGINX holds nothing: the whole map');
});

actor.run();
