// Record a live session — the manifests source over a temporary directory, the real store,
// model, renderer and pipeline, with offline actors so no NGINX is needed — while manifests are
// added, edited and deleted; then replay the log in virtual time and check it ends where the
// live run ended, and that two replays through the CLI are byte-identical.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asyncScheduler } from 'rxjs';
import { createStore, defaultStoreOptions } from '../../src/store/store.js';
import { createModelBuilder } from '../../src/model/build.js';
import { createRenderer } from '../../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR } from '../../src/render/runtime.js';
import { createSyncer, type SyncResult } from '../../src/actors/sync.js';
import { modelSyncDeps } from '../../src/actors/model-sync.js';
import { createPipeline } from '../../src/pipeline/pipeline.js';
import { manifestsSource } from '../../src/streams/manifests.js';
import { createRecorder, recordingHooks } from '../../src/streams/record.js';
import { createOfflineActors } from '../../src/actors/offline.js';
import { offlineRuntime } from '../../src/render/offline.js';
import { readReplayLog } from '../../src/streams/replay-log.js';
import { replay } from '../../src/cli/replay-run.js';
import { main } from '../../src/cli/main.js';
import { silentLogger } from '../../src/log.js';
import { waitFor } from '../support/wait.js';
import { listFiles } from '../support/files.js';
import { ANNOTATION_REFERENCES } from '../../src/model/ingress/annotations/index.js';

const ANNOTATIONS = 'nginx.ingress.kubernetes.io';
const CONFIGMAP = 'ingress-nginx/ingress-nginx-controller';
const SYNC_RATE = 20;

const cluster = (bodySize: string) => `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: { name: nginx }
spec: { controller: k8s.io/ingress-nginx }
---
apiVersion: v1
kind: ConfigMap
metadata: { name: ingress-nginx-controller, namespace: ingress-nginx }
data: { proxy-body-size: "${bodySize}" }
`;

const app = (ips: string[]) => `
apiVersion: v1
kind: Service
metadata: { name: web, namespace: default }
spec: { ports: [{ name: http, port: 80, targetPort: 8080 }] }
---
apiVersion: v1
kind: Endpoints
metadata: { name: web, namespace: default }
subsets: [{ addresses: [${ips.map((ip) => `{ ip: ${ip} }`).join(', ')}], ports: [{ name: http, port: 8080 }] }]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: web, namespace: default }
spec:
  ingressClassName: nginx
  tls: [{ hosts: [a.example.com], secretName: a-tls }]
  rules:
  - host: a.example.com
    http: { paths: [{ path: /, pathType: Prefix, backend: { service: { name: web, port: { name: http } } } }] }
`;

const second = `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: { name: second, namespace: default }
spec:
  ingressClassName: nginx
  rules:
  - host: b.example.com
    http: { paths: [{ path: /b, pathType: Prefix, backend: { service: { name: web, port: { number: 80 } } } }] }
`;

function tlsSecret(dir: string): string {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '30', '-subj', '/CN=a.example.com',
    '-addext', 'subjectAltName=DNS:a.example.com', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem')], { stdio: 'ignore' });
  const b64 = (f: string) => readFileSync(join(dir, f)).toString('base64');
  return `
apiVersion: v1
kind: Secret
type: kubernetes.io/tls
metadata: { name: a-tls, namespace: default }
data: { tls.crt: ${b64('c.pem')}, tls.key: ${b64('k.pem')} }
`;
}

test('a recorded live session replays in virtual time to the same nginx.conf and payloads', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ingress-rx-e2e-replay-'));
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests);
  const logFile = join(dir, 'session.ndjson');
  const logger = silentLogger();
  let sub: { unsubscribe(): void } | null = null;
  try {
    writeFileSync(join(manifests, 'cluster.yaml'), cluster('8m'));
    writeFileSync(join(manifests, 'app.yaml'), app(['10.0.0.1']));
    writeFileSync(join(manifests, 'tls.yaml'), tlsSecret(dir));

    const storeOptions = { ...defaultStoreOptions(), configmap: CONFIGMAP };
    const scheduler = asyncScheduler;
    const recorder = createRecorder({
      file: logFile, recordSecrets: true, logger, scheduler,
      header: { ingressRx: '0.1.0', store: storeOptions, syncRateLimit: SYNC_RATE, ringCapacity: 1024, burst: 1, annotationsPrefix: ANNOTATIONS, defaultServerPort: 8181 },
    });
    const store = createStore(storeOptions, ANNOTATION_REFERENCES, logger);
    const builder = createModelBuilder({ annotationsPrefix: ANNOTATIONS, defaultServerPort: 8181, logger });
    const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger });
    const live = createOfflineActors({ renderer, runtime: offlineRuntime(8181), logger });
    const syncer = createSyncer(modelSyncDeps({ store, builder, scheduler, reload: (c) => live.reload(c), dynamic: (u) => live.dynamic(u) }));

    let lastQueued = 0;
    const results: SyncResult[] = [];
    const record = recordingHooks(recorder);
    sub = createPipeline({
      inputs: manifestsSource({ dir: manifests, logger, debounceMs: 20 }), store, scheduler, sync: syncer, syncRateLimit: SYNC_RATE,
      hooks: { received: record.received, queued: (it) => { lastQueued = Math.max(lastQueued, it.id); } },
    }).subscribe((r) => results.push(r));

    // Settled: the newest queued event went through a sync that applied.
    const settled = () => results.some((r) => r.applied && r.itemIds.includes(lastQueued));
    const conf = () => live.nginxConf ?? '';
    const step = async (what: string, check: () => boolean) => {
      await waitFor(() => check() && settled(), { what, timeoutMs: 15_000 });
    };

    await step('first configuration', () => conf().includes('a.example.com'));
    assert.match(live.servers!, /BEGIN CERTIFICATE/, 'the TLS certificate is served');

    writeFileSync(join(manifests, 'app.yaml'), app(['10.0.0.1', '10.0.0.2']));
    await step('a second endpoint', () => (live.backends ?? '').includes('10.0.0.2'));
    writeFileSync(join(manifests, 'second.yaml'), second);
    await step('a second Ingress', () => conf().includes('b.example.com'));
    writeFileSync(join(manifests, 'cluster.yaml'), cluster('16m'));
    await step('a ConfigMap change', () => conf().includes('16m'));
    unlinkSync(join(manifests, 'second.yaml'));
    writeFileSync(join(manifests, 'app.yaml'), app(['10.0.0.2', '10.0.0.3']));
    await step('the second Ingress deleted and endpoints changed', () => !conf().includes('b.example.com') && (live.backends ?? '').includes('10.0.0.3'));
    sub.unsubscribe();
    sub = null;
    await recorder.close();
    assert.is(recorder.failed, false);

    const log = readReplayLog(logFile);
    assert.ok(log.entries.length >= 8, `${log.entries.length} entries recorded`);
    assert.ok(log.entries.every(({ input }) => !('task' in input && input.task === 'configmap-change')), 'derived tasks are not recorded');
    const out = join(dir, 'replayed');
    const report = await replay({ log, mode: { instant: true }, outDir: out, logger });
    assert.equal(report.warnings, []);
    assert.is(readFileSync(join(out, 'final', 'nginx.conf'), 'utf8'), live.nginxConf, 'same nginx.conf');
    assert.is(readFileSync(join(out, 'final', 'backends.json'), 'utf8'), live.backends, 'same backends');
    assert.is(readFileSync(join(out, 'final', 'servers.json'), 'utf8'), live.servers, 'same servers and certificates');
    assert.ok(report.reloads >= 4, `${report.reloads} reloads: first, second Ingress, ConfigMap, deletion`);
    const replayed = readFileSync(join(out, 'decisions.ndjson'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.equal([replayed[0].events, replayed[0].decision], [results[0]!.events, results[0]!.decision], 'the initial list is one batch, as live');

    // Through the CLI, twice: byte-identical.
    const one = join(dir, 'cli-one');
    const two = join(dir, 'cli-two');
    const quiet = process.stdout.write.bind(process.stdout);
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      assert.is(await main(['replay', logFile, '--instant', '--out', one]), 0);
      assert.is(await main(['replay', logFile, '--instant', '--out', two, '--trace', join(dir, 'trace.json')]), 0);
    } finally {
      process.stdout.write = quiet;
    }
    const files = listFiles(one);
    assert.equal(files, listFiles(two));
    for (const f of files) assert.ok(readFileSync(join(one, f)).equals(readFileSync(join(two, f))), `${f} identical`);
    assert.is(readFileSync(join(one, 'final', 'nginx.conf'), 'utf8'), live.nginxConf);
    assert.ok(JSON.parse(readFileSync(join(dir, 'trace.json'), 'utf8')).traceEvents.length > 0);
  } finally {
    sub?.unsubscribe();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
