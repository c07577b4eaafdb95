// The dynamic-config actor under TestScheduler: POST order, 201 as the only success, retries on
// the backoff in exact virtual time, per-request timeouts, partial success, never an error.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { TestScheduler } from 'rxjs/testing';
import { NEVER, Observable, delay, of, throwError, timer, map } from 'rxjs';
import { createDynamicConfigActor, waitForControl, type DynamicResult, type RequestBody, type HttpResponseLike, type RequestFn } from '../../../src/actors/dynamic-config.js';
import { backoffDelays, DESIGN_BACKOFF } from '../../../src/actors/backoff.js';
import { silentLogger } from '../../../src/log.js';
import type { Backend } from '../../../src/model/core/types.js';
import type { RouteEntry } from '../../../src/model/core/routes-payload.js';

/** The serialiser takes any list; these tests post partial or odd backends on purpose. */
const backends = (list: unknown[]): Backend[] => list as Backend[];

/** A request body as one string (backends come as chunks). */
const bodyText = (body: RequestBody | undefined): string | undefined => (body === undefined || typeof body === 'string' ? body : body.join(''));

const CONTROL = { socketPath: '/run/irx/control.sock', token: () => 'token' };
const noJitter = { random: () => 0 };

interface Call { method: string; url: string; body?: string; signal?: AbortSignal; at: number }

function harness(answer: (call: Call, n: number) => Observable<HttpResponseLike>) {
  const scheduler = new TestScheduler((a, b) => assert.equal(a, b));
  const calls: Call[] = [];
  const request: RequestFn = (method, url, body, signal) => {
    const call = { method, url, body: bodyText(body), signal, at: scheduler.now() };
    calls.push(call);
    return answer(call, calls.length);
  };
  const actor = createDynamicConfigActor({ control: CONTROL, scheduler, logger: silentLogger(), request, backoff: noJitter });
  return { scheduler, calls, actor };
}

const created = of({ status: 201, body: '' });
const update = { backends: backends([{ name: 'a' }]), servers: { certificates: { u: 'pem' }, servers: { 'a.test': 'u' } } };

function runActor(h: ReturnType<typeof harness>, u: Parameters<typeof h.actor>[0]): { result: DynamicResult; at: number } {
  let out: { result: DynamicResult; at: number } | undefined;
  h.scheduler.run(() => {
    h.actor(u).subscribe({ next: (result) => { out = { result, at: h.scheduler.now() }; }, error: () => assert.unreachable('the actor errored') });
  });
  assert.ok(out, 'the actor emitted');
  return out!;
}

test('the backends: the whole list at first, then only the backends that changed (as JSON.stringify writes them; a replaced one compared by its text) and the names of those gone; a 409 brings the whole list at once, any other failure makes the next one whole', () => {
  let answers: number[] = [];
  const h = harness(() => of({ status: answers.shift() ?? 201, body: '' }));
  type Body = { base?: string; id: string; backends: unknown[]; deleted?: string[] };
  const sent = (back = 1) => JSON.parse(h.calls[h.calls.length - back]!.body!) as Body;
  let serialised = 0;
  const serialisedNames: string[] = [];
  const counted = (name: string, address = '10.0.0.1') => ({ name, endpoints: [{ address, port: '80' }], toJSON() { serialised += 1; serialisedNames.push(`${this.name} ${address}`); return { name: this.name, endpoints: this.endpoints }; } });
  const odd = { name: 'plain', weight: 1.5, none: undefined, quote: 'b"\u2028é' };
  const many = [...Array.from({ length: 300 }, (_, i) => counted(`b${i}`)), odd];

  runActor(h, { backends: backends(many) });
  assert.is(serialised, 300);
  assert.is(h.calls[0]!.body, `{"id":${JSON.stringify(sent().id)},"backends":${JSON.stringify(many)}}`, 'each backend as JSON.stringify writes it');
  const first = sent().id;

  // An endpoint change: that backend alone, serialised with the one NGINX holds (no text of the list is kept to compare with).
  const changed = many.slice();
  changed[200] = counted('b200', '10.0.0.2');
  serialised = 0;
  serialisedNames.length = 0;
  runActor(h, { backends: backends(changed) });
  // The whole list's text is not kept per backend: the one NGINX held is serialised again to compare.
  assert.equal(serialisedNames.sort(), ['b200 10.0.0.1', 'b200 10.0.0.2'], 'only the changed backend and the one it replaces are serialised');
  assert.equal([sent().base, sent().backends, sent().deleted], [first, [{ name: 'b200', endpoints: [{ address: '10.0.0.2', port: '80' }] }], []]);

  // A backend gone and one added.
  runActor(h, { backends: backends([...changed.slice(1), counted('new')]) });
  assert.equal([sent().backends.map((b) => (b as { name: string }).name), sent().deleted], [['new'], ['b0']]);
  const third = sent().id;

  // NGINX restarted: the change is refused (409) and the whole list follows in the same attempt.
  answers = [409];
  const restarted = runActor(h, { backends: backends(changed.slice(1)) });
  assert.equal([restarted.result.ok, restarted.result.attempts, restarted.at], [true, 1, 0]);
  assert.equal([sent(2).base, sent(2).deleted], [third, ['new']]);
  assert.equal([sent().base, sent().backends.length], [undefined, 300]);

  // Any other failure: NGINX may or may not hold the change, so the retry posts the whole list.
  answers = [500];
  const failed = runActor(h, { backends: backends(changed.slice(2)) });
  assert.equal([failed.result.ok, failed.result.attempts], [true, 2]);
  assert.equal([sent(2).deleted, sent().base, sent().backends.length], [['b1'], undefined, 299]);
  runActor(h, { backends: backends(changed.slice(2)) });
  assert.equal([sent().backends, sent().deleted], [[], []], 'nothing changed: an empty change');
  runActor(h, { backends: [] });
  assert.equal([sent().backends, sent().deleted!.length], [[], 299]);
});

test('a 413 is not retried; the bytes NGINX says it lacked come with the result', () => {
  const h = harness(() => of({ status: 413, body: 'backends: backend x: 10 bytes of 20 do not fit in lua_shared_dict configuration_data, 7 bytes short (nothing was changed)\n' }));
  const { result } = runActor(h, update);
  assert.equal([result.ok, result.attempts, result.tooLarge, result.tooLargeBy], [false, 1, 'backends', 7]);
  const plain = runActor(harness(() => of({ status: 413, body: '<html>413 Request Entity Too Large</html>' })), update).result;
  assert.equal([plain.tooLarge, plain.tooLargeBy], ['backends', undefined], 'NGINX\'s own 413 (the body limit) says nothing');
});

test('posts each present part once, in order, as JSON; 201 everywhere is success at once', () => {
  const h = harness(() => created);
  const { result, at } = runActor(h, update);
  assert.is(at, 0);
  assert.equal({ ...result, startedAt: 0 }, { ok: true, attempts: 1, durationMs: 0, posted: ['backends', 'servers'], startedAt: 0, partMs: { backends: 0, servers: 0 } });
  assert.equal(h.calls.map((c) => [c.method, c.url]), [
    ['POST', `/configuration/backends`], ['POST', `/configuration/servers`],
  ]);
  assert.equal(JSON.parse(h.calls[0].body!).backends, update.backends);
  assert.equal(JSON.parse(h.calls[1].body!), update.servers);
});

test('each part says how long NGINX took to answer it, in scheduler time (the last attempt\'s)', () => {
  const h = harness((call, n) => (n === 2 ? of({ status: 500, body: '' }) : of({ status: 201, body: '' }).pipe(delay(call.url.endsWith('backends') ? 7 : 30, h.scheduler))));
  const { result, at } = runActor(h, update);
  // backends 7 ms; servers refused at once, retried after 1 s, then answered in 30 ms.
  assert.equal(result.partMs, { backends: 7, servers: 30 });
  assert.is(at, 7 + 1000 + 30);
});

test('only the parts present are posted; nothing to post is an immediate success', () => {
  const h = harness(() => created);
  assert.equal(runActor(h, { servers: update.servers }).result.posted, ['servers']);
  assert.equal(h.calls.map((c) => c.url), [`/configuration/servers`]);
  const empty = runActor(harness(() => created), {});
  assert.equal({ ok: empty.result.ok, attempts: empty.result.attempts, posted: empty.result.posted }, { ok: true, attempts: 0, posted: [] });
});

test('marble: a non-201 answer is retried after 1 s, 0.8 s, 0.64 s, then succeeds', () => {
  const h = harness((_, n) => (n <= 3 ? of({ status: 500, body: 'boom' }) : created));
  h.scheduler.run(({ expectObservable }) => {
    const out = h.actor({ backends: [] }).pipe(map((r) => `${r.ok}/${r.attempts}/${r.durationMs}`));
    expectObservable(out).toBe('2440ms (a|)', { a: 'true/4/2440' });
  });
  assert.equal(h.calls.map((c) => c.at), [0, 1000, 1800, 2440]);
});

test('all 15 attempts failing ends in a failed result after the whole schedule, never an error', () => {
  const h = harness(() => of({ status: 503, body: 'no room' }));
  const { result, at } = runActor(h, { backends: [] });
  const total = backoffDelays({ ...DESIGN_BACKOFF, ...noJitter }).reduce((a, b) => a + b, 0);
  assert.is(at, total);
  assert.is(h.calls.length, 15);
  assert.is(result.ok, false);
  assert.is(result.attempts, 15);
  assert.is(result.durationMs, total);
  assert.equal(result.posted, []);
  assert.match(result.error!, /after 15 attempts/);
  assert.match(result.error!, /HTTP 503: no room/);
});

test('a refused connection is retried like any failure', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:10246'), { code: 'ECONNREFUSED' });
  const h = harness((_, n) => (n === 1 ? throwError(() => refused) : created));
  const { result, at } = runActor(h, { backends: [] });
  assert.equal([result.ok, result.attempts, at], [true, 2, 1000]);
});

test('a request that never answers times out after timeoutMs, is aborted, and is retried', () => {
  const scheduler = new TestScheduler((a, b) => assert.equal(a, b));
  const calls: Call[] = [];
  const request: RequestFn = (method, url, body, signal) => {
    calls.push({ method, url, body: bodyText(body), signal, at: scheduler.now() });
    return calls.length === 1 ? NEVER : timer(30, scheduler).pipe(map(() => ({ status: 201, body: '' })));
  };
  const actor = createDynamicConfigActor({ control: CONTROL, scheduler, logger: silentLogger(), request, backoff: noJitter, timeoutMs: 250 });
  scheduler.run(({ expectObservable }) => {
    expectObservable(actor({ backends: [] }).pipe(map((r) => `${r.ok}/${r.attempts}`))).toBe('1280ms (a|)', { a: 'true/2' });
  });
  assert.equal(calls.map((c) => c.at), [0, 1250]);
  assert.is(calls[0].signal!.aborted, true, 'the hung request was aborted');
});

test('after a partial success only the failed parts are posted again', () => {
  let serversFailures = 2;
  const h = harness((call) => (call.url.endsWith('/servers') && serversFailures-- > 0 ? of({ status: 400, body: 'bad' }) : created));
  const { result } = runActor(h, update);
  assert.equal([result.ok, result.attempts], [true, 3]);
  assert.equal(h.calls.map((c) => c.url.split('/').pop()), ['backends', 'servers', 'servers', 'servers']);
  assert.equal(result.posted, ['backends', 'servers']);
});

test('a failed result lists the parts that did get through', () => {
  const h = harness((call) => (call.url.endsWith('/servers') ? of({ status: 500, body: '' }) : created));
  const { result } = runActor(h, update);
  assert.is(result.ok, false);
  assert.equal(result.posted, ['backends']);
  assert.match(result.error!, /POST \/configuration\/servers: HTTP 500/);
});

test('a failed update leaves no retry behind: the next update starts afresh (the route table aside, below)', () => {
  let fail = true;
  const h = harness(() => (fail ? of({ status: 500, body: '' }) : created));
  assert.is(runActor(h, { backends: [] }).result.ok, false);
  fail = false;
  assert.equal(runActor(h, { backends: [] }).result.attempts, 1);
});

test('the route table: whole at first, then each change against the table NGINX accepted; a 409 brings the whole table at once, any other failure makes the next one whole', () => {
  const entry = (backend: string) => [{ match: 'prefix', pattern: '/', backend }] as unknown as RouteEntry[];
  const table = (hosts: Record<string, RouteEntry[]>) => ({ routes: { hosts } });
  const a = entry('a');
  const b = entry('b');
  let answers: number[] = [];
  const h = harness(() => of({ status: answers.shift() ?? 201, body: '' }));
  const sent = () => JSON.parse(h.calls[h.calls.length - 1]!.body!) as { base?: string; id: string; hosts: Record<string, unknown>; deleted?: string[] };

  runActor(h, table({ 'a.test': a }));
  const first = sent();
  assert.equal([first.base, Object.keys(first.hosts)], [undefined, ['a.test']]);
  runActor(h, table({ 'a.test': a, 'b.test': b }));
  assert.equal([sent().base, Object.keys(sent().hosts), sent().deleted], [first.id, ['b.test'], []]);
  const second = sent().id;

  // NGINX restarted: the change is refused (409) and the whole table follows in the same attempt.
  answers = [409];
  const restarted = runActor(h, table({ 'b.test': b }));
  assert.equal([restarted.result.ok, restarted.result.attempts, restarted.at], [true, 1, 0]);
  const [refused, whole] = h.calls.slice(-2).map((c) => JSON.parse(c.body!) as { base?: string; hosts: object; deleted?: string[] });
  assert.equal([refused!.base, refused!.deleted], [second, ['a.test']]);
  assert.equal([whole!.base, Object.keys(whole!.hosts)], [undefined, ['b.test']]);

  // Any other failure: NGINX may or may not hold the change, so the retry posts the whole table.
  answers = [500];
  const failed = runActor(h, table({ 'b.test': b, 'c.test': a }));
  assert.equal([failed.result.ok, failed.result.attempts], [true, 2]);
  assert.equal(Object.keys(JSON.parse(h.calls[h.calls.length - 2]!.body!).hosts), ['c.test'], 'the change');
  assert.equal([sent().base, Object.keys(sent().hosts)], [undefined, ['b.test', 'c.test']]);
  runActor(h, table({ 'b.test': b, 'c.test': a }));
  assert.equal([Object.keys(sent().hosts), sent().deleted], [[], []]);
});

test('waitForControl polls until NGINX answers at all (404 included)', () => {
  const scheduler = new TestScheduler((a, b) => assert.equal(a, b));
  let n = 0;
  const request: RequestFn = () => (++n <= 3 ? throwError(() => new Error('ECONNREFUSED')) : of({ status: 404, body: '' }));
  scheduler.run(({ expectObservable }) => {
    expectObservable(waitForControl(CONTROL, { scheduler, timeoutMs: 5000, request })).toBe('300ms (a|)', { a: undefined });
  });
});

test('waitForControl errors with a clear message after timeoutMs', () => {
  const scheduler = new TestScheduler((a, b) => assert.equal(a, b));
  const request: RequestFn = () => throwError(() => new Error('ECONNREFUSED'));
  let failure: { message: string; at: number } | undefined;
  scheduler.run(() => {
    waitForControl(CONTROL, { scheduler, timeoutMs: 2000, intervalMs: 50, request }).subscribe({
      next: () => assert.unreachable('no answer was given'),
      error: (err: Error) => { failure = { message: err.message, at: scheduler.now() }; },
    });
  });
  assert.equal(failure, { message: 'NGINX did not answer on unix:/run/irx/control.sock within 2000 ms', at: 2000 });
});

test.run();
