// The bench generator produces the cluster the benchmarks claim to measure: every Ingress
// becomes a server (canaries merge into their primary's), TLS hosts get the shared certificate,
// no warnings; and its manifests and event logs read back through the real sources.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStore, defaultStoreOptions } from '../../src/store/store.js';
import { createModelBuilder } from '../../src/model/build.js';
import { readManifests } from '../../src/streams/manifests.js';
import { readReplayLog } from '../../src/streams/replay-log.js';
import { isTask, type SourceEvent } from '../../src/store/events.js';
import { generateEvents, hostOf, isCanary, writeEventLog, writeManifests } from '../../bench/gen.js';
import { ANNOTATION_REFERENCES } from '../../src/model/ingress/annotations/index.js';

const N = 40;

function build(events: SourceEvent[]) {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES);
  for (const e of events) store.apply(e);
  return createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181 }).build(store);
}

test('the generated cluster builds into one server per primary Ingress, without warnings', () => {
  const { config, warnings } = build(generateEvents({ n: N }));
  assert.equal(warnings, []);
  const primaries = [...Array(N).keys()].filter((i) => !isCanary(i));
  const hosts = config.servers.map((s) => s.hostname).filter((h) => h !== '_').sort();
  assert.equal(hosts, primaries.map(hostOf).sort());
  for (const s of config.servers.filter((x) => x.hostname !== '_')) {
    const i = Number(/^app-(\d+)\./.exec(s.hostname)![1]);
    assert.is(s.certificate !== null, i % 10 === 1, `certificate of ${s.hostname}`);
  }
  // Every Service is a backend with its three endpoints; a canary's is an alternative of its primary's.
  const svc = config.backends.filter((b) => /-svc-\d+-80$/.test(b.name));
  assert.is(svc.length, N);
  for (const b of svc) assert.is(b.endpoints.length, 3, b.name);
  const primary = config.backends.find((b) => b.name === 'bench-8-svc-18-80')!;
  assert.equal(primary.alternativeBackends, ['bench-8-svc-19-80']);
});

test('manifests and event logs read back through the manifests source and the replay reader', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'irx-bench-gen-'));
  try {
    const events = generateEvents({ n: N });
    writeManifests(join(dir, 'm'), { n: N }, 3);
    const read = readManifests(join(dir, 'm'));
    assert.equal(read.errors, []);
    assert.is(read.events.length, events.length);
    assert.equal(build(read.events).config.servers.map((s) => s.hostname).sort(), build(events).config.servers.map((s) => s.hostname).sort());

    const written = await writeEventLog(join(dir, 'log.ndjson'), { n: N }, { storm: 25, stormRate: 10 });
    const log = readReplayLog(join(dir, 'log.ndjson'));
    assert.is(written, events.length + 25);
    assert.is(log.entries.length, written);
    const storm = log.entries.slice(events.length);
    assert.ok(storm.every((e) => !isTask(e.input) && e.input.kind === 'EndpointSlice' && e.input.type === 'update'));
    assert.ok(storm.every((e, k) => k === 0 || e.t > storm[k - 1]!.t), 'storm times increase');
    assert.is(storm.at(-1)!.t, 1000 + 2400);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
