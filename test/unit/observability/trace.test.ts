// Stream tracing: the Chrome trace file of a replayed session (valid JSON, a span or mark for
// every stage, a flow arrow from each event to the sync that merged it), the trace-level log
// lines, and `trace summary` against a small trace counted by hand.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { asyncScheduler } from 'rxjs';
import { createTracer, TRACKS, type TraceEvent } from '../../../src/observability/trace.js';
import { formatTraceSummary, parseTrace, percentile, summariseTrace } from '../../../src/observability/trace-summary.js';
import { parseReplayLog } from '../../../src/streams/replay-log.js';
import { replay } from '../../../src/cli/replay-run.js';
import { runTraceSummary } from '../../../src/cli/trace.js';
import type { PipelineItem } from '../../../src/store/events.js';
import type { SyncResult } from '../../../src/actors/sync.js';
import { silentLogger } from '../../../src/log.js';
import { header, logText, stormEntries } from '../../fixtures/replay/logs.js';
import type { RecordEntry } from '../../../src/streams/record.js';

let dir = '';
const tmp = (name: string) => {
  if (!dir) throw new Error('no temporary directory');
  return join(dir, name);
};

function capturingLogger(level = 'trace') {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level }, { write: (s: string) => { lines.push(JSON.parse(s)); } });
  return { logger, lines };
}

// ---- the trace of a replayed session

const file = suite('trace: the Chrome trace-event file');
file.before(() => { dir = mkdtempSync(join(tmpdir(), 'ingress-rx-trace-')); });
file.after(() => rmSync(dir, { recursive: true, force: true }));

file('a replayed storm traces every stage, with a flow from each merged event to its sync', async () => {
  const entries: RecordEntry[] = [
    ...stormEntries(300, 2_000), // ring of 16: drops
    { t: 2_500, kind: 'Service', type: 'add', key: 'other/ignored', object: { metadata: { name: 'ignored', namespace: 'other', resourceVersion: '1' } } },
    { t: 9_000, task: 'template-change', detail: 'nginx.conf.liquid' },
  ];
  const { logger, lines } = capturingLogger();
  const traceFile = tmp('trace.json');
  const report = await replay({ log: parseReplayLog(logText(header({ ringCapacity: 16 }), entries)), mode: { instant: true }, outDir: tmp('out'), logger, trace: traceFile });

  const doc = JSON.parse(readFileSync(traceFile, 'utf8')) as { traceEvents: TraceEvent[] };
  const events = doc.traceEvents;
  for (const e of events) {
    assert.ok(['X', 'i', 's', 'f', 'M'].includes(e.ph), `phase ${e.ph}`);
    assert.type(e.ts, 'number');
    assert.ok(Number.isInteger(e.ts) && e.ts >= 0);
    if (e.ph === 'X') assert.ok(typeof e.dur === 'number' && e.dur >= 1);
  }
  const named = events.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => [e.tid, e.args!.name]);
  assert.equal(named, Object.entries(TRACKS).map(([n, tid]) => [tid, n]));

  const on = (cat: string, ph?: string, name?: string) => events.filter((e) => e.cat === cat && (!ph || e.ph === ph) && (!name || e.name === name));
  assert.is(on('source', 'X').length, entries.length, 'every input received');
  assert.ok(on('source', 'X').every((e) => e.tid === TRACKS.source && typeof e.args!.id === 'number'));
  assert.ok(on('store', 'i', 'filtered').some((e) => typeof e.args!.reason === 'string' && (e.args!.reason as string).length > 0), 'filtered, with the reason');
  const dropped = on('ring', 'i', 'dropped');
  assert.ok(dropped.length > 0, 'drops by the ring of 16');
  assert.ok(on('ring', 'i', 'queued').length > 0);
  const syncs = on('sync', 'X');
  assert.is(syncs.length, report.syncs);
  assert.is(on('bucket', 'X').length, report.syncs, 'one bucket wait per sync');
  assert.ok(on('bucket', 'X').some((e) => (e.args!.waitedMs as number) > 0));
  assert.is(on('reload', 'X').length, report.reloads);
  assert.ok(report.reloads >= 2, 'the first configuration and the template change');
  assert.is(on('dynamic', 'X').length, report.dynamicUpdates);
  assert.ok(on('sync', 'i').every((e) => /^decision (none|dynamic|reload)$/.test(e.name)));

  // Flows: each start has its end, each end sits at the start of a sync span on the sync track.
  const starts = new Map(events.filter((e) => e.ph === 's').map((e) => [e.id, e]));
  const ends = events.filter((e) => e.ph === 'f');
  assert.is(starts.size, ends.length);
  const syncStarts = new Set(syncs.map((s) => s.ts));
  const receivedAt = new Map(on('source', 'X').map((e) => [e.args!.id as number, e.ts]));
  for (const f of ends) {
    const s = starts.get(f.id)!;
    assert.ok(s, `flow ${f.id} has a start`);
    assert.is(f.bp, 'e');
    assert.is(f.tid, TRACKS.sync);
    assert.ok(syncStarts.has(f.ts), 'ends at a sync');
    assert.is(s.tid, TRACKS.source);
    assert.is(s.ts, receivedAt.get(f.id!), 'starts where the event was received');
  }
  const droppedIds = new Set(dropped.map((e) => e.args!.id));
  const merged = new Set(ends.map((f) => f.id));
  for (const id of droppedIds) assert.not.ok(merged.has(id as number), 'a dropped event is merged nowhere');
  assert.is(merged.size, syncs.reduce((n, s) => n + (s.args!.events as number), 0));

  // The same story in the log, at trace level.
  const stages = (stage: string) => lines.filter((l) => l.stage === stage).length;
  assert.is(stages('received'), entries.length);
  assert.is(stages('dropped'), dropped.length);
  assert.is(stages('merged'), merged.size);
  assert.is(stages('sync'), report.syncs);

  // And the summary of this trace agrees with the replay's own counts.
  const s = summariseTrace(events);
  assert.is(s.events, entries.length);
  assert.is(s.dropped, dropped.length);
  assert.is(s.syncs, report.syncs);
  assert.is(s.reloads, report.reloads);
  assert.is(s.latencyMs.count, merged.size, 'one latency per applied event');
});

file('the tracer streams a live trace asynchronously and the file is complete after close', async () => {
  const traceFile = tmp('live.json');
  const t0 = 1_700_000_000_000;
  const clock = { now: () => t0, schedule: asyncScheduler.schedule.bind(asyncScheduler) };
  const tracer = createTracer({ file: traceFile, logger: silentLogger(), scheduler: clock });
  const item: PipelineItem = { id: 1, t: t0, skippable: true, input: { kind: 'EndpointSlice', type: 'update', key: 'a/b', object: { metadata: { name: 'b' } } } };
  tracer.hooks.received!(item);
  tracer.hooks.queued!(item);
  tracer.hooks.released!({ n: 1, t: t0, items: [item] }, 0);
  const result: SyncResult = {
    sync: 1, t: t0, events: 1, itemIds: [1], decision: 'dynamic', reason: 'endpoints changed', checksum: 'abc', applied: true,
    posted: ['backends'], warnings: [], quarantined: [], durationMs: 12, dynamic: { ok: true, attempts: 3, durationMs: 10, startedAt: t0 + 2 },
  };
  tracer.syncDone(result);
  await tracer.close();
  const events = parseTrace(readFileSync(traceFile, 'utf8'));
  const post = events.find((e) => e.cat === 'dynamic')!;
  assert.equal([post.ts, post.dur, post.args!.attempts], [2000, 10_000, 3]);
  assert.equal(events.find((e) => e.cat === 'sync' && e.ph === 'X')!.args!.appliedIds, [1]);
});

file('tracing without a file writes trace-level log lines only', () => {
  const { logger, lines } = capturingLogger();
  const tracer = createTracer({ logger, scheduler: asyncScheduler });
  tracer.hooks.filtered!({ id: 7, t: 0, skippable: true, input: { kind: 'Secret', type: 'add', key: 'x/y', object: { metadata: { name: 'y' } } } }, 'not referenced by any Ingress');
  assert.equal(lines.map((l) => [l.level, l.stage, l.id, l.reason]), [[10, 'filtered', 7, 'not referenced by any Ingress']]);
});

file.run();

// ---- the summary, against a trace counted by hand

const summary = suite('trace: summary');
summary.before(() => { dir = mkdtempSync(join(tmpdir(), 'ingress-rx-trace-')); });
summary.after(() => rmSync(dir, { recursive: true, force: true }));

const X = (cat: string, ts: number, args: Record<string, unknown>, name = cat): TraceEvent => ({ name, cat, ph: 'X', ts, dur: 1, pid: 1, tid: 1, args });
const I = (cat: string, name: string, ts: number, args: Record<string, unknown>): TraceEvent => ({ name, cat, ph: 'i', s: 't', ts, pid: 1, tid: 1, args });

/**
 * Six inputs; #5 filtered, #6 dropped. Sync 1 (0 ms, takes 2 ms) applies #1. Sync 2 (3334 ms,
 * 100 ms) fails its reload. Sync 3 (6668 ms, 50 ms) applies #2, #3, #4.
 */
const HAND_TRACE: TraceEvent[] = [
  X('source', 0, { id: 1, kind: 'EndpointSlice' }),
  X('source', 1000, { id: 2, kind: 'EndpointSlice' }),
  X('source', 2000, { id: 3, kind: 'Ingress' }),
  X('source', 2000, { id: 4, task: 'template-change' }),
  X('source', 5000, { id: 5, kind: 'Secret' }),
  I('store', 'filtered', 5000, { id: 5, reason: 'not referenced' }),
  X('source', 6000, { id: 6, kind: 'EndpointSlice' }),
  I('ring', 'queued', 6000, { id: 6 }),
  I('ring', 'dropped', 6001, { id: 6 }),
  X('bucket', 0, { sync: 1, waitedMs: 0 }),
  X('bucket', 0, { sync: 2, waitedMs: 3334 }),
  X('bucket', 6658000, { sync: 3, waitedMs: 10 }),
  X('sync', 0, { sync: 1, applied: true, durationMs: 2, appliedIds: [1] }),
  X('reload', 0, { ok: true }),
  X('dynamic', 1000, { ok: true }),
  X('sync', 3334000, { sync: 2, applied: false, durationMs: 100, appliedIds: [] }),
  X('reload', 3334000, { ok: false }),
  X('sync', 6668000, { sync: 3, applied: true, durationMs: 50, appliedIds: [2, 3, 4] }),
  X('reload', 6668000, { ok: true }),
  X('dynamic', 6700000, { ok: true }),
];

summary('figures match the hand count', () => {
  const s = summariseTrace(HAND_TRACE);
  assert.is(s.events, 6);
  assert.equal(s.eventsByKind, { EndpointSlice: 3, Ingress: 1, Secret: 1, 'task:template-change': 1 });
  assert.is(s.filtered, 1);
  assert.is(s.dropped, 1);
  assert.equal([s.syncs, s.syncsFailed], [3, 1]);
  // waits 0, 10, 3334 → p50 the 2nd, p99 the 3rd
  assert.equal(s.bucketWaitMs, { p50: 10, p99: 3334, count: 3 });
  assert.equal(s.syncDurationMs, { p50: 50, p99: 100, count: 3 });
  assert.equal([s.reloads, s.reloadsFailed, s.dynamicUpdates, s.dynamicFailed], [3, 1, 2, 0]);
  // #1: 2 − 0; #2: 6718 − 1; #3, #4: 6718 − 2 → 2, 6716, 6716, 6717
  assert.equal(s.latencyMs, { p50: 6716, p99: 6717, count: 4 });
});

summary('the printed table', () => {
  assert.is(formatTraceSummary(summariseTrace(HAND_TRACE)), [
    'events                  6',
    '  EndpointSlice         3',
    '  Ingress               1',
    '  Secret                1',
    '  task:template-change  1',
    'filtered by the store   1',
    'dropped by the ring     1',
    'syncs                   3 (1 failed)',
    'bucket wait per sync    p50 10 ms   p99 3334 ms',
    'sync duration           p50 50 ms   p99 100 ms',
    'reloads                 3 (1 failed)',
    'dynamic updates         2 (0 failed)',
    'event to applied        p50 6716 ms   p99 6717 ms',
    '',
  ].join('\n'));
});

summary('nearest-rank percentiles', () => {
  const v = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal([percentile(v, 50), percentile(v, 99), percentile(v, 100), percentile([7], 99), percentile([], 50)], [50, 99, 100, 7, 0]);
});

summary('`trace summary FILE` prints the table, also for a trace cut short', async () => {
  const text = `{"traceEvents":[\n${HAND_TRACE.map((e) => JSON.stringify(e)).join('\n,')}\n]}\n`;
  writeFileSync(tmp('hand.json'), text);
  writeFileSync(tmp('cut.json'), text.slice(0, text.lastIndexOf('\n]}')));
  for (const name of ['hand.json', 'cut.json']) {
    const out = process.stdout.write.bind(process.stdout);
    let stdout = '';
    process.stdout.write = ((s: string) => { stdout += s; return true; }) as typeof process.stdout.write;
    let code: number;
    try {
      code = await runTraceSummary(tmp(name));
    } finally {
      process.stdout.write = out;
    }
    assert.is(code, 0, name);
    assert.is(stdout, formatTraceSummary(summariseTrace(HAND_TRACE)), name);
  }
  const err = process.stderr.write.bind(process.stderr);
  process.stderr.write = (() => true) as typeof process.stderr.write;
  try {
    assert.is(await runTraceSummary(tmp('missing.json')), 2);
  } finally {
    process.stderr.write = err;
  }
});

summary.run();

