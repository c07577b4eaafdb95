// Replay: reading logs (versions, truncation, malformed lines), driving the real pipeline and
// model in virtual time (storm pacing, final state, byte-identical output), scaled real time,
// and `nginx -t` on every distinct configuration.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseReplayLog, readReplayLog, ReplayLogError } from '../../../src/streams/replay-log.js';
import { replay } from '../../../src/cli/replay-run.js';
import { replayInputs, scaledScheduler } from '../../../src/streams/replay-source.js';
import { contentChecksum, createOfflineActors, payloadText } from '../../../src/actors/offline.js';
import { offlineRuntime } from '../../../src/render/offline.js';
import type { Renderer } from '../../../src/render/engine.js';
import { runReplay } from '../../../src/cli/replay.js';
import { silentLogger } from '../../../src/log.js';
import { VirtualAction, VirtualTimeScheduler, asyncScheduler, toArray, lastValueFrom } from 'rxjs';
import type { Backend } from '../../../src/model/core/types.js';
import type { Ingress, Secret } from '../../../src/store/kube-types.js';
import { createSecretRedactor, type RecordedEvent, type RecordEntry } from '../../../src/streams/record.js';
import { baseCluster, header, ingress, logText, slice, stormEntries } from '../../fixtures/replay/logs.js';
import { listFiles } from '../../support/files.js';
import { createStore } from '../../../src/store/store.js';
import { createModelBuilder } from '../../../src/model/build.js';
import { ANNOTATION_REFERENCES } from '../../../src/model/ingress/annotations/index.js';
import type { SourceEvent } from '../../../src/store/events.js';

let dir = '';
const tmp = (name: string) => {
  if (!dir) throw new Error('no temporary directory');
  return join(dir, name);
};

/** Runs `fn` with stdout and stderr captured. */
async function captured<T>(fn: () => Promise<T>): Promise<{ value: T; stdout: string; stderr: string }> {
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  let stdout = '';
  let stderr = '';
  process.stdout.write = ((s: string) => { stdout += s; return true; }) as typeof process.stdout.write;
  process.stderr.write = ((s: string) => { stderr += s; return true; }) as typeof process.stderr.write;
  try {
    return { value: await fn(), stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

const decisions = (out: string) => readFileSync(join(out, 'decisions.ndjson'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));

// ---- reading logs

const read = suite('replay: reading a log');
read.before(() => { dir = mkdtempSync(join(tmpdir(), 'ingress-rx-replay-')); });
read.after(() => rmSync(dir, { recursive: true, force: true }));

read('refuses a log of a newer format version, naming both versions', () => {
  const text = logText(header({ version: 99, ingressRx: '9.0.0' }), baseCluster());
  const err = (() => { try { parseReplayLog(text, 'new.ndjson'); } catch (e) { return e; } return null; })();
  assert.instance(err, ReplayLogError);
  assert.match((err as Error).message, /format version 99 is newer than this ingress-rx reads \(1\)/);
  assert.match((err as Error).message, /9\.0\.0/);
});

read('refuses something that is not a record log', () => {
  assert.throws(() => parseReplayLog('{"hello":1}\n', 'x.ndjson'), /not an ingress-rx record log/);
  assert.throws(() => parseReplayLog('', 'x.ndjson'), /empty log/);
});

read('tolerates a truncated last line and reports it', () => {
  const full = logText(header(), baseCluster());
  const cut = full + full.split('\n')[2]!.slice(0, 40); // a half-written entry, no newline
  const log = parseReplayLog(cut, 'cut.ndjson');
  assert.is(log.entries.length, 4);
  assert.is(log.warnings.length, 1);
  assert.match(log.warnings[0]!, /^cut\.ndjson:6: the last line is truncated/);
});

read('a malformed line in the middle is an error with its line number', () => {
  const lines = logText(header(), baseCluster()).split('\n');
  lines.splice(3, 0, '{"t": 5, "kind": "Ingress", oops');
  assert.throws(() => parseReplayLog(lines.join('\n'), 'bad.ndjson'), (e: Error) => e instanceof ReplayLogError && /^bad\.ndjson:4: malformed line/.test(e.message));
  const unknown = logText(header(), [...baseCluster(), { t: 9, kind: 'Pod' as never, type: 'add', key: 'a/b', object: { metadata: { name: 'b' } } }]);
  assert.throws(() => parseReplayLog(unknown, 'k.ndjson'), /k\.ndjson:6: unknown kind "Pod"/);
});

read('the CLI exits 2 on a newer version and 0 with a warning on a truncated log', async () => {
  writeFileSync(tmp('new.ndjson'), logText(header({ version: 2 }), baseCluster()));
  const refused = await captured(() => runReplay(tmp('new.ndjson'), { instant: true, out: tmp('out-new') }));
  assert.is(refused.value, 2);
  assert.match(refused.stderr, /record format version 2 is newer/);

  writeFileSync(tmp('cut.ndjson'), `${logText(header(), baseCluster())}{"t":10,"kind":"Endpoint`);
  const cut = await captured(() => runReplay(tmp('cut.ndjson'), { instant: true, out: tmp('out-cut') }));
  assert.is(cut.value, 0, cut.stderr);
  assert.match(cut.stderr, /warning: .*cut\.ndjson:6: the last line is truncated/);
  assert.match(cut.stdout, /replayed 4 events/);
  assert.ok(readFileSync(join(tmp('out-cut'), 'final', 'nginx.conf'), 'utf8').includes('storm.example.com'));
});

read.run();

// ---- replaying

const play = suite('replay: the pipeline in virtual time');
play.before(() => { dir = mkdtempSync(join(tmpdir(), 'ingress-rx-replay-')); });
play.after(() => rmSync(dir, { recursive: true, force: true }));

play('a storm of 10,000 endpoint events in 60 s syncs as often as the bucket allows, and ends right', async () => {
  const log = parseReplayLog(logText(header(), stormEntries(10_000, 60_000)));
  const out = tmp('storm');
  const started = Date.now();
  const report = await replay({ log, mode: { instant: true }, outDir: out, logger: silentLogger() });
  assert.ok(Date.now() - started < 20_000, 'virtual time: no waiting');
  const lines = decisions(out);
  assert.is(report.syncs, lines.length);
  assert.ok(lines.length <= Math.ceil(60 * 0.3) + 1, `${lines.length} syncs`);
  assert.ok(lines.length >= Math.ceil(60 * 0.3), `${lines.length} syncs: the storm is not starved either`);
  for (const l of lines) assert.equal(Object.keys(l), ['sync', 't', 'events', 'decision', 'reason', 'checksum']);
  assert.equal(lines.slice(0, 3).map((l) => [l.sync, l.t, l.decision]), [[1, 0, 'reload'], [2, 3334, 'dynamic'], [3, 6668, 'dynamic']]);
  for (let i = 1; i < lines.length; i++) assert.ok(lines[i].t - lines[i - 1].t >= 3334, 'paced by the bucket');
  assert.is(lines.reduce((n, l) => n + l.events, 0), 10_002, 'every relevant event merged into some sync (IngressClass and Service filtered)');

  const backends = JSON.parse(readFileSync(join(out, 'final', 'backends.json'), 'utf8')) as Backend[];
  const web = backends.find((b) => b.name === 'default-web-80')!;
  assert.equal(web.endpoints.map((e) => e.address).sort(), ['10.1.0.1', '10.2.39.249'], 'the last event wins');
  assert.match(readFileSync(join(out, 'final', 'nginx.conf'), 'utf8'), /storm\.example\.com/);
});

play('replaying one log twice gives byte-identical output', async () => {
  const entries = [
    ...baseCluster(),
    ...Array.from({ length: 300 }, (_, k) => slice(100 + k * 50, 10 + k, ['10.1.0.1', `10.3.0.${k % 200}`])),
    ingress(9_000, 'renamed.example.com', 'update', 5000),
    ingress(20_000, 'renamed.example.com', 'update', 5001, '/api'),
  ];
  const log = parseReplayLog(logText(header(), entries));
  await replay({ log, mode: { instant: true }, outDir: tmp('one'), logger: silentLogger() });
  await replay({ log, mode: { instant: true }, outDir: tmp('two'), logger: silentLogger() });
  const files = listFiles(tmp('one'));
  assert.equal(files, listFiles(tmp('two')));
  assert.ok(files.includes('decisions.ndjson') && files.includes('final/nginx.conf') && files.includes('final/backends.json') && files.includes('final/servers.json'));
  assert.ok(files.filter((f) => f.startsWith('configs/')).length >= 3, 'three distinct configurations (reloads)');
  for (const f of files) assert.ok(readFileSync(join(tmp('one'), f)).equals(readFileSync(join(tmp('two'), f))), `${f} identical`);
  for (const f of files.filter((x) => x.startsWith('configs/'))) {
    const text = readFileSync(join(tmp('one'), f), 'utf8');
    assert.not.match(text, dir, 'no temporary path in the output');
  }
  const final = readFileSync(join(tmp('one'), 'final', 'nginx.conf'), 'utf8');
  assert.match(final, /renamed\.example\.com/);
  assert.match(final, /\/api/);
  assert.not.match(final, /storm\.example\.com/);
  const reloads = decisions(tmp('one')).filter((l) => l.decision === 'reload');
  assert.is(reloads.length, 3, 'first config, the rename, the new path');
});

play('a small ring drops events in a storm but the final state is still right', async () => {
  const log = parseReplayLog(logText(header({ ringCapacity: 16 }), stormEntries(2_000, 10_000)));
  const out = tmp('ring');
  await replay({ log, mode: { instant: true }, outDir: out, logger: silentLogger(), trace: tmp('ring-trace.json') });
  const merged = decisions(out).reduce((n, l) => n + l.events, 0);
  assert.ok(merged < 2_002 && merged <= decisions(out).length * 16, `${merged} events reached a sync`);
  const web = (JSON.parse(readFileSync(join(out, 'final', 'backends.json'), 'utf8')) as Backend[]).find((b) => b.name === 'default-web-80')!;
  assert.equal(web.endpoints.map((e) => e.address).sort(), ['10.1.0.1', '10.2.7.249']);
});

play('--nginx-test runs nginx -t on each distinct configuration', async () => {
  const log = parseReplayLog(logText(header(), [...baseCluster(), ingress(5_000, 'b.example.com', 'update', 9)]));
  const report = await replay({ log, mode: { instant: true }, outDir: tmp('tested'), nginxTest: true, logger: silentLogger() });
  assert.is(report.failedSyncs, 0);
  assert.is(report.reloads, 2);
  assert.equal(report.warnings, []);
});

play('a configuration that fails nginx -t is a reload failure in the timeline, and retries stop at the end of the log', async () => {
  const log = parseReplayLog(logText(header(), baseCluster()));
  const report = await replay({ log, mode: { instant: true }, outDir: tmp('failing'), nginxTest: true, nginxBinary: '/bin/false', logger: silentLogger() });
  const lines = decisions(tmp('failing'));
  assert.ok(lines.length >= 1 && lines.every((l) => l.decision === 'reload'));
  assert.is(report.failedSyncs, lines.length);
  assert.ok(report.warnings.some((w) => /cannot be applied .*nginx -t failed/.test(w)), report.warnings.join('\n'));
  assert.ok(report.warnings.some((w) => /final\/nginx\.conf is not written/.test(w)));
});

play('a TLS Secret recorded with its key redacted replays with the default certificate, and says so', async () => {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '30', '-subj', '/CN=storm.example.com',
    '-addext', 'subjectAltName=DNS:storm.example.com', '-keyout', tmp('k.pem'), '-out', tmp('c.pem')], { stdio: 'ignore' });
  const secret: Secret = {
    apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'tls', namespace: 'default', resourceVersion: '8' },
    data: { 'tls.crt': readFileSync(tmp('c.pem')).toString('base64'), 'tls.key': readFileSync(tmp('k.pem')).toString('base64') },
  };
  const withTLS = (s: Secret): RecordEntry[] => {
    const ing = ingress(0, 'storm.example.com') as RecordedEvent;
    (ing.object as Ingress).spec.tls = [{ hosts: ['storm.example.com'], secretName: 'tls' }];
    return [...baseCluster().filter((e) => (e as RecordedEvent).kind !== 'Ingress'), { t: 0, kind: 'Secret', type: 'add', key: 'default/tls', object: s }, ing];
  };
  const servers = (out: string) => JSON.parse(readFileSync(join(out, 'final', 'servers.json'), 'utf8')) as { servers: Record<string, string>; certificates: Record<string, string> };

  const faithful = await replay({ log: parseReplayLog(logText(header({ secretsRedacted: false }), withTLS(secret))), mode: { instant: true }, outDir: tmp('tls-kept'), logger: silentLogger() });
  assert.equal(faithful.warnings, []);
  const uid = servers(tmp('tls-kept')).servers['storm.example.com']!;
  assert.match(servers(tmp('tls-kept')).certificates[uid]!, /BEGIN CERTIFICATE/);

  const redacted = await replay({ log: parseReplayLog(logText(header(), withTLS(createSecretRedactor()(secret)))), mode: { instant: true }, outDir: tmp('tls-redacted'), logger: silentLogger() });
  assert.ok(redacted.warnings.some((w) => /1 TLS Secret\(s\) were recorded with redacted keys/.test(w)), redacted.warnings.join('\n'));
  assert.is(servers(tmp('tls-redacted')).servers['storm.example.com'], 'fallback', 'the default (fallback) certificate is served');
  assert.is(redacted.failedSyncs, 0);
});

play('an auth Secret recorded redacted keeps its shape: the same nginx.conf and decisions as with the real users', async () => {
  const auth: Secret = {
    apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 'htpasswd', namespace: 'default', resourceVersion: '8' },
    data: { auth: Buffer.from('alice:$apr1$Hx3vP1bS$Qx3i7l0sE8bq9eM2hXy0u/\n').toString('base64') },
  };
  const withAuth = (s: Secret): RecordEntry[] => {
    const ing = ingress(0, 'storm.example.com') as RecordedEvent;
    (ing.object as Ingress).metadata.annotations = { 'nginx.ingress.kubernetes.io/auth-type': 'basic', 'nginx.ingress.kubernetes.io/auth-secret': 'htpasswd' };
    return [...baseCluster().filter((e) => (e as RecordedEvent).kind !== 'Ingress'), { t: 0, kind: 'Secret', type: 'add', key: 'default/htpasswd', object: s }, ing];
  };
  await replay({ log: parseReplayLog(logText(header({ secretsRedacted: false }), withAuth(auth))), mode: { instant: true }, outDir: tmp('auth-kept'), logger: silentLogger() });
  const redacted = await replay({ log: parseReplayLog(logText(header(), withAuth(createSecretRedactor()(auth)))), mode: { instant: true }, outDir: tmp('auth-redacted'), logger: silentLogger() });
  // The configuration checksum hashes the whole model, users included; everything else is the same.
  const conf = (d: string) => {
    const text = readFileSync(join(tmp(d), 'final', 'nginx.conf'), 'utf8');
    const sum = /^# Configuration checksum: ([0-9a-f]+)$/m.exec(text)![1]!;
    return text.replaceAll(sum, '<checksum>');
  };
  assert.match(conf('auth-kept'), /auth_basic/);
  assert.is(conf('auth-redacted'), conf('auth-kept'));
  assert.equal(decisions(tmp('auth-redacted')).map((l) => l.decision), decisions(tmp('auth-kept')).map((l) => l.decision));
  assert.equal(redacted.warnings, []);
});

play('a checked-in format-1 log still replays, with the decisions its timeline implies', async () => {
  const log = readReplayLog(new URL('../../fixtures/replay/v1-session.ndjson', import.meta.url).pathname);
  assert.equal(log.warnings, []);
  const report = await replay({ log, mode: { instant: true }, outDir: tmp('v1'), logger: silentLogger() });
  // t=0 first config; 1.2 s/1.3 s endpoints + 2 s template change wait for the token at 3334;
  // 8 s path change (token available); 9 s deletion waits for the token at 11334.
  assert.equal(decisions(tmp('v1')).map((l) => [l.sync, l.t, l.events, l.decision]), [
    [1, 0, 2, 'reload'], [2, 3334, 3, 'reload'], [3, 8000, 1, 'reload'], [4, 11334, 1, 'reload'],
  ]);
  assert.is(decisions(tmp('v1'))[1].reason, 'template-change nginx.conf.liquid');
  assert.is(report.configs, 3, 'the template change re-renders the same configuration');
  assert.not.match(readFileSync(join(tmp('v1'), 'final', 'nginx.conf'), 'utf8'), /storm\.example\.com/);
});

play('the offline dynamic actor keeps each distinct payload once: the whole backends list, then what changed, each backend as JSON.stringify writes it', () => {
  const actors = createOfflineActors({ renderer: {} as Renderer, runtime: offlineRuntime(8181), logger: silentLogger(), outDir: tmp('offline') });
  const a = { name: 'a', endpoints: [{ address: '10.0.0.1', port: '80' }] } as unknown as Backend;
  const b = { name: 'b', endpoints: [] as unknown[], note: 'quote " and \u2028' } as unknown as Backend;
  actors.dynamic({ backends: [a, b] }).subscribe();
  const b2 = { ...b, endpoints: [{ address: '10.0.0.2', port: '80' }] } as Backend;
  actors.dynamic({ backends: [a, b2] }).subscribe();
  assert.is(actors.backends, payloadText([a, b2]));
  actors.dynamic({ backends: [a, b2] }).subscribe();
  assert.is(actors.payloads.size, 2, 'the same list again changes nothing: no new payload');
  assert.equal(listFiles(tmp('offline')), [...actors.payloads].map((k) => `payloads/${k}.json`).sort());
  const files = [...actors.payloads].map((sum) => ({ sum, text: readFileSync(join(tmp('offline'), 'payloads', `${sum}.json`), 'utf8') }));
  for (const f of files) assert.is(contentChecksum(f.text), f.sum, 'named by its content');
  assert.equal(files.map((f) => f.text).sort(), [
    payloadText({ id: 'offline', backends: [a, b] }),
    payloadText({ base: 'offline', id: 'offline', deleted: [], backends: [b2] }),
  ].sort(), 'the whole list once, then only the changed backend, as JSON.stringify writes them');
});

play('a storm over many Services ends with the backends a cold build of the final store gives, each as JSON.stringify writes it', async () => {
  const services = 30;
  const meta = (name: string, rv: number, extra: Record<string, unknown> = {}) =>
    ({ name, namespace: 'default', uid: `uid-${name}`, resourceVersion: String(rv), creationTimestamp: '2026-10-01T00:00:00Z', ...extra });
  const sliceOf = (t: number, i: number, rv: number, addresses: string[], type: 'add' | 'update'): RecordEntry => ({
    t, kind: 'EndpointSlice', type, key: `default/svc-${i}-abc`,
    object: {
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4', metadata: meta(`svc-${i}-abc`, rv, { labels: { 'kubernetes.io/service-name': `svc-${i}` } }),
      endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })), ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    },
  });
  const entries: RecordEntry[] = [baseCluster()[0]!];
  for (let i = 0; i < services; i++) {
    const annotations = i % 3 === 0 ? { 'nginx.ingress.kubernetes.io/affinity': 'cookie' } : i % 3 === 1 ? { 'nginx.ingress.kubernetes.io/upstream-hash-by': '$request_uri' } : {};
    entries.push(
      { t: 0, kind: 'Service', type: 'add', key: `default/svc-${i}`, object: { apiVersion: 'v1', kind: 'Service', metadata: meta(`svc-${i}`, 2), spec: { type: 'ClusterIP', clusterIP: `10.0.1.${i}`, ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }] } } },
      {
        t: 0, kind: 'Ingress', type: 'add', key: `default/ing-${i}`,
        object: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: meta(`ing-${i}`, 3, { annotations }), spec: { ingressClassName: 'nginx', rules: [{ host: `host-${i}.example.com`, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: `svc-${i}`, port: { number: 80 } } } }] } }] } },
      },
      sliceOf(0, i, 4, [`10.1.${i}.1`], 'add'),
    );
  }
  for (let k = 0; k < 3000; k++) {
    const i = (k * 7) % services;
    entries.push(sliceOf(Math.floor(k * 10), i, 100 + k, k % 5 === 0 ? [] : [`10.1.${i}.1`, `10.2.${k % 200}.${i}`], 'update'));
  }
  const h = header();
  const out = tmp('many-services');
  await replay({ log: parseReplayLog(logText(h, entries)), mode: { instant: true }, outDir: out, logger: silentLogger() });
  assert.ok(decisions(out).length > 5, 'several syncs, each after many endpoint changes');

  const store = createStore(h.store, ANNOTATION_REFERENCES);
  for (const e of entries) if (!('task' in e)) store.apply({ kind: e.kind, type: e.type, key: e.key, object: e.object } as SourceEvent);
  const cold = createModelBuilder({ annotationsPrefix: h.annotationsPrefix, defaultServerPort: h.defaultServerPort, now: () => new Date('2026-11-01T00:00:30Z') }).build(store).config;
  const byName = [...cold.backends].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  assert.is(readFileSync(join(out, 'final', 'backends.json'), 'utf8'), `[${byName.map((b) => JSON.stringify(b)).join(',')}]\n`);
});

play('100,000 events replay in virtual time with the syncs the bucket allows (speed: bench/)', async () => {
  const log = parseReplayLog(logText(header(), stormEntries(100_000, 600_000)));
  const report = await replay({ log, mode: { instant: true }, outDir: tmp('big'), logger: silentLogger() });
  assert.is(report.events, 100_004);
  assert.ok(report.syncs <= Math.ceil(600 * 0.3) + 1);
});

play('--speed plays log time faster in real time, with the bucket on the same clock', async () => {
  // Real time is injected: a virtual clock stands for it, so the scale is exact under any load.
  const wall = new VirtualTimeScheduler(VirtualAction, Infinity);
  const sched = scaledScheduler(wall, 20);
  const entries = [{ t: 0, input: { kind: 'task' as const, task: 'retry' as const } }, { t: 2_000, input: { kind: 'task' as const, task: 'retry' as const } }];
  const seen: Array<{ log: number; real: number }> = [];
  replayInputs(entries, sched).subscribe(() => seen.push({ log: sched.now(), real: wall.now() }));
  wall.flush();
  assert.equal(seen, [{ log: 0, real: 0 }, { log: 2_000, real: 100 }], '2 s of log time take 100 ms of real time at speed 20');

  const log = parseReplayLog(logText(header(), [...baseCluster(), slice(1_000, 50, ['10.9.9.9'])]));
  const realClock = new VirtualTimeScheduler(VirtualAction, Infinity);
  const report = await replay({ log, mode: { speed: 10, clock: realClock }, outDir: tmp('speed'), logger: silentLogger() });
  await replay({ log, mode: { instant: true }, outDir: tmp('speed-instant'), logger: silentLogger() });
  const lines = decisions(tmp('speed'));
  assert.is(report.syncs, 2);
  assert.is(lines[1].t, 3_334, 'the second sync waits for the bucket (0.3/s) in log time');
  assert.equal(lines, decisions(tmp('speed-instant')), 'the same decisions at the same log times as --instant');
  assert.ok(Math.abs(realClock.now() * 10 - report.durationMs) < 1e-6, `log time ${report.durationMs} ms took ${realClock.now()} ms of real time at speed 10`);
});

play('--speed on the real clock plays nothing before its scaled time', async () => {
  const sched = scaledScheduler(asyncScheduler, 20);
  const entries = [{ t: 0, input: { kind: 'task' as const, task: 'retry' as const } }, { t: 2_000, input: { kind: 'task' as const, task: 'retry' as const } }];
  const started = performance.now();
  await lastValueFrom(replayInputs(entries, sched).pipe(toArray()));
  // Only a lower bound: load can delay timers, never fire them early.
  assert.ok(performance.now() - started >= 95, '2 s of log time at speed 20 wait ~100 ms of real time');
});

play.run();
