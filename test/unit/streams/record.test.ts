// The recorder: header and entry lines, time offsets, Secret redaction, a full disk, and the
// hooks that feed it from the pipeline.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { SchedulerLike } from 'rxjs';
import {
  createRecorder, createSecretRedactor, isRedacted, recordingHooks, REDACTED_PREFIX, RECORD_FORMAT, RECORD_FORMAT_VERSION, type RecordHeader,
} from '../../../src/streams/record.js';
import { parseReplayLog } from '../../../src/streams/replay-log.js';
import { defaultStoreOptions } from '../../../src/store/store.js';
import type { PipelineInput, PipelineItem, SourceEvent } from '../../../src/store/events.js';
import type { Secret } from '../../../src/store/kube-types.js';
import { silentLogger } from '../../../src/log.js';
import { htpasswdLines } from '../../../src/model/ingress/annotations/authbasic.js';

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => { lines.push(JSON.parse(s)); } });
  return { logger, lines };
}

function clock(start: number) {
  let now = start;
  const scheduler = { now: () => now, schedule: () => { throw new Error('not used'); } } as unknown as SchedulerLike;
  return { scheduler, set: (t: number) => { now = t; } };
}

const headerFields = () => ({
  ingressRx: '0.1.0', store: defaultStoreOptions(), syncRateLimit: 0.3, ringCapacity: 1024, burst: 1,
  annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181,
});

const PEM_CRT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const tlsSecret = (key: string): Secret => ({
  apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls',
  metadata: { name: 'tls', namespace: 'default', resourceVersion: '7' },
  data: { 'tls.crt': b64(PEM_CRT), 'tls.key': b64(key), 'ca.crt': b64('CA') },
  stringData: { auth: 'user:$apr1$hash' },
});
const secretEvent = (s: Secret): SourceEvent => ({ kind: 'Secret', type: 'add', key: 'default/tls', object: s });
const sliceEvent = (rv: number): SourceEvent => ({
  kind: 'EndpointSlice', type: 'update', key: 'default/web-abc',
  object: { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'web-abc', namespace: 'default', resourceVersion: String(rv) } },
});

let dir = '';
const rec = suite('recorder');
rec.before(() => { dir = mkdtempSync(join(tmpdir(), 'ingress-rx-record-')); });
rec.after(() => rmSync(dir, { recursive: true, force: true }));

rec('writes a header with the model-shaping flags, then one line per event or task with its time offset', async () => {
  const file = join(dir, 'session.ndjson');
  const c = clock(1_000_000);
  const recorder = createRecorder({ file, header: headerFields(), recordSecrets: false, logger: silentLogger(), scheduler: c.scheduler, now: () => Date.UTC(2026, 10, 1) });
  const tick = () => new Promise((r) => setImmediate(r));
  recorder.record(sliceEvent(1), 1_000_000);
  await tick();
  recorder.record({ kind: 'task', task: 'template-change', detail: 'nginx.conf.liquid' }, 1_000_250);
  await tick();
  recorder.record(sliceEvent(2), 1_003_334);
  await recorder.close();

  const lines = readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
  assert.is(lines.length, 4);
  const h = lines[0] as RecordHeader;
  assert.is(h.format, RECORD_FORMAT);
  assert.is(h.version, RECORD_FORMAT_VERSION);
  assert.is(h.startedAt, '2026-11-01T00:00:00.000Z');
  assert.is(h.syncRateLimit, 0.3);
  assert.is(h.secretsRedacted, true);
  assert.equal(h.store, defaultStoreOptions());
  assert.equal(lines[1], { t: 0, kind: 'EndpointSlice', type: 'update', key: 'default/web-abc', object: sliceEvent(1).object });
  assert.equal(lines[2], { t: 250, task: 'template-change', detail: 'nginx.conf.liquid' });
  assert.is(lines[3].t, 3334);
  assert.is(recorder.written, 3);
  assert.is(recorder.failed, false);

  // What the recorder writes, the replay reader reads back as the same inputs.
  const log = parseReplayLog(readFileSync(file, 'utf8'));
  assert.equal(log.entries.map((e) => [e.t, e.input]), [
    [0, sliceEvent(1)], [250, { kind: 'task', task: 'template-change', detail: 'nginx.conf.liquid' }], [3334, sliceEvent(2)],
  ]);
});

rec('redacts Secret values but keeps the public certificate; a changed key still shows as a change', async () => {
  const original = tlsSecret('-----BEGIN PRIVATE KEY-----\nSECRET\n-----END PRIVATE KEY-----\n');
  const redactSecret = createSecretRedactor();
  const redacted = redactSecret(original);
  assert.is(redacted.data!['tls.crt'], original.data!['tls.crt'], 'public certificate kept');
  assert.is(redacted.data!['ca.crt'], original.data!['ca.crt'], 'CA certificate kept');
  const decoded = (v: string) => Buffer.from(v, 'base64').toString('utf8');
  assert.match(decoded(redacted.data!['tls.key']!), new RegExp(`^${REDACTED_PREFIX}[0-9a-f]{32}$`), 'base64 like the value it replaces');
  assert.match(redacted.stringData!.auth!, new RegExp(`^${REDACTED_PREFIX}[0-9a-f]{32}$`), 'plain under stringData');
  assert.ok(isRedacted(redacted, 'tls.key') && isRedacted(redacted, 'auth') && !isRedacted(redacted, 'tls.crt') && !isRedacted(original, 'tls.key'));
  // The placeholder is a valid htpasswd line, so an auth Secret keeps its shape on replay.
  assert.equal(htpasswdLines(redacted.stringData!.auth!).users, [redacted.stringData!.auth!]);
  assert.is(original.data!['tls.key'], b64('-----BEGIN PRIVATE KEY-----\nSECRET\n-----END PRIVATE KEY-----\n'), 'input not mutated');
  const other = redactSecret(tlsSecret('another key'));
  assert.is.not(other.data!['tls.key'], redacted.data!['tls.key']);

  const file = join(dir, 'secrets.ndjson');
  const c = clock(0);
  const recorder = createRecorder({ file, header: headerFields(), recordSecrets: false, logger: silentLogger(), scheduler: c.scheduler });
  recorder.record(secretEvent(original), 0);
  await recorder.close();
  const text = readFileSync(file, 'utf8');
  assert.not.match(text, original.data!['tls.key']!, 'the private key never reaches the file');
  assert.not.match(text, 'user:$apr1$hash');
  assert.match(text, original.data!['tls.crt']!);

  const kept = join(dir, 'secrets-kept.ndjson');
  const withSecrets = createRecorder({ file: kept, header: headerFields(), recordSecrets: true, logger: silentLogger(), scheduler: c.scheduler });
  withSecrets.record(secretEvent(original), 0);
  await withSecrets.close();
  const keptText = readFileSync(kept, 'utf8');
  assert.match(keptText, original.data!['tls.key']!);
  assert.is(JSON.parse(keptText.split('\n')[0]!).secretsRedacted, false);
});

rec('fingerprints are keyed per recording: equal within one log, unrelated across logs, and no plain SHA-256 of the value', () => {
  const secret = tlsSecret('hunter2');
  const one = createSecretRedactor();
  const two = createSecretRedactor();
  assert.is(one(secret).data!['tls.key'], one(tlsSecret('hunter2')).data!['tls.key'], 'the same value gives the same marker within a recording');
  assert.is.not(one(secret).data!['tls.key'], two(secret).data!['tls.key'], 'another recording cannot be matched against this one');
  const marker = Buffer.from(one(secret).data!['tls.key']!, 'base64').toString('utf8');
  const plain = createHash('sha256').update(b64('hunter2')).digest('hex');
  const plainOfDecoded = createHash('sha256').update('hunter2').digest('hex');
  assert.not.ok(plain.includes(marker.slice(REDACTED_PREFIX.length, REDACTED_PREFIX.length + 16)) || plainOfDecoded.includes(marker.slice(REDACTED_PREFIX.length, REDACTED_PREFIX.length + 16)),
    'a guessed password cannot be confirmed by hashing it');
});

rec("a redacted Secret keeps only the metadata the store reads: kubectl's last-applied copy and managedFields are gone", () => {
  const key = '-----BEGIN PRIVATE KEY-----\nPLANTED\n-----END PRIVATE KEY-----\n';
  const applied: Secret = {
    ...tlsSecret(key),
    metadata: {
      name: 'tls', namespace: 'default', resourceVersion: '7', uid: 'u-1', creationTimestamp: '2026-01-01T00:00:00Z', labels: { owner: 'team' },
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({ data: { 'tls.key': b64(key) } }),
        'note': 'password: hunter2',
      },
      managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:data': { 'v:"hunter2"': {} } } }],
    } as Secret['metadata'],
  };
  const redacted = createSecretRedactor()(applied);
  assert.equal(redacted.metadata, { name: 'tls', namespace: 'default', uid: 'u-1', resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z', labels: { owner: 'team' } });
  const text = JSON.stringify(redacted);
  for (const planted of [b64(key), 'PLANTED', 'hunter2']) assert.not.ok(text.includes(planted), planted);
  assert.is(redacted.type, 'kubernetes.io/tls');
});

rec('recordings are readable by their owner only, even over an existing world-readable file', async () => {
  const file = join(dir, 'private.ndjson');
  writeFileSync(file, 'old', { mode: 0o644 });
  chmodSync(file, 0o644);
  const recorder = createRecorder({ file, header: headerFields(), recordSecrets: false, logger: silentLogger(), scheduler: clock(0).scheduler });
  recorder.record(sliceEvent(1), 0);
  await recorder.close();
  assert.is(statSync(file).mode & 0o777, 0o600);
  assert.is(readFileSync(file, 'utf8').split('\n').length, 3, 'the old content is replaced');
});

rec('a full disk (/dev/full) is logged once and counted, never thrown', async () => {
  const { logger, lines } = capturingLogger();
  const c = clock(0);
  const recorder = createRecorder({ file: '/dev/full', header: headerFields(), recordSecrets: false, logger, scheduler: c.scheduler });
  for (let i = 0; i < 100; i++) recorder.record(sliceEvent(i), i);
  await new Promise((r) => setImmediate(r));
  for (let i = 100; i < 200; i++) recorder.record(sliceEvent(i), i);
  await recorder.close();
  assert.is(recorder.failed, true);
  assert.ok(recorder.lost >= 100, `lost ${recorder.lost}`);
  const errors = lines.filter((l) => l.level === 50);
  assert.is(errors.length, 1, 'one error line, however many writes failed');
  assert.match(String(errors[0]!.msg), /ENOSPC|no space/i);
});

rec('keeps every line of a large fast burst (queue + backpressure)', async () => {
  const file = join(dir, 'burst.ndjson');
  const c = clock(0);
  const recorder = createRecorder({ file, header: headerFields(), recordSecrets: false, logger: silentLogger(), scheduler: c.scheduler });
  const padding = 'x'.repeat(500);
  for (let i = 0; i < 20_000; i++) {
    const ev = sliceEvent(i);
    ev.object.metadata.annotations = { padding };
    recorder.record(ev, i);
  }
  await recorder.close();
  const log = parseReplayLog(readFileSync(file, 'utf8'));
  assert.is(log.entries.length, 20_000);
  assert.equal(log.entries.map((e) => e.input.kind === 'EndpointSlice' && e.input.object.metadata.resourceVersion), Array.from({ length: 20_000 }, (_, i) => String(i)), 'in order');
  assert.equal(log.warnings, []);
});

rec('inputs emitted in one synchronous burst share the burst\'s first time, so replay batches them as live did', async () => {
  const file = join(dir, 'bursts.ndjson');
  const c = clock(0);
  const recorder = createRecorder({ file, header: headerFields(), recordSecrets: false, logger: silentLogger(), scheduler: c.scheduler });
  for (let i = 0; i < 3; i++) recorder.record(sliceEvent(i), 100 + i * 7); // a slow synchronous initial list
  await new Promise((r) => setImmediate(r));
  recorder.record(sliceEvent(3), 500);
  recorder.record(sliceEvent(4), 503);
  await new Promise((r) => setImmediate(r));
  recorder.record(sliceEvent(5), 900);
  await recorder.close();
  assert.equal(parseReplayLog(readFileSync(file, 'utf8')).entries.map((e) => e.t), [100, 100, 100, 500, 500, 900]);
});

rec('recordingHooks records raw inputs, but not the configmap-change tasks the store derives', () => {
  const seen: Array<[PipelineInput, number]> = [];
  const hooks = recordingHooks({ record: (input, t) => seen.push([input, t]) });
  const item = (id: number, input: PipelineInput): PipelineItem => ({ id, t: id * 10, skippable: true, input });
  hooks.received!(item(1, sliceEvent(1)));
  hooks.received!(item(2, { kind: 'task', task: 'configmap-change', detail: 'ingress-nginx/ingress-nginx-controller' }));
  hooks.received!(item(3, { kind: 'task', task: 'file-change', detail: '/geoip/GeoLite2-City.mmdb' }));
  assert.equal(seen.map(([input, t]) => [('task' in input ? input.task : input.kind), t]), [['EndpointSlice', 10], ['file-change', 30]]);
});

rec.run();
