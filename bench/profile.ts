// Profiles the syncs that miss their targets: runs a 10k full sync, Ingress changes and
// EndpointSlice changes under `node --cpu-prof`, then prints the hottest functions (self time,
// by module) of each phase's profile. Phases are profiled separately with inspector sessions.
//   node --import tsx bench/profile.ts [--n 10000] [--out .bench/prof]
import { Session } from 'node:inspector/promises';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import { createModelBuilder } from '../src/model/build.js';
import { snapshot } from '../src/model/core/hash.js';
import { decide } from '../src/model/core/decide.js';
import { backendsPayload, createBackendsSerialiser } from '../src/model/core/payload.js';
import { createRenderer } from '../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR, defaultRuntime } from '../src/render/runtime.js';
import { silentLogger } from '../src/log.js';
import { CACHE_DIR, REPO_ROOT, generateEvents, ingressObject, sliceObject } from './gen.js';
import { arg } from './lib.js';
import { ANNOTATION_REFERENCES } from '../src/model/ingress/annotations/index.js';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

/** Self time per function, as shares of the profile, hottest first. */
export function hotSpots(profile: Profile, top = 12): Array<{ fn: string; where: string; share: number; ms: number }> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totals = new Map<string, { fn: string; where: string; us: number }>();
  let all = 0;
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    // `dispatch` (native) is the in-process inspector session itself, not the code profiled.
    if (f.functionName === '(idle)' || f.functionName === '(program)' || (f.functionName === 'dispatch' && !f.url)) continue;
    all += us;
    const url = f.url.replace(/^file:\/\//, '');
    const where = url ? `${relative(REPO_ROOT, url)}:${f.lineNumber + 1}` : '(native)';
    const key = `${f.functionName}@${where}`;
    const t = totals.get(key) ?? { fn: f.functionName || '(anonymous)', where, us: 0 };
    t.us += us;
    totals.set(key, t);
  }
  return [...totals.values()].sort((a, b) => b.us - a.us).slice(0, top)
    .map((t) => ({ fn: t.fn, where: t.where, share: t.us / all, ms: t.us / 1000 }));
}

async function profiled<T>(session: Session, name: string, outDir: string, fn: () => T): Promise<T> {
  await session.post('Profiler.start');
  const result = fn();
  const { profile } = await session.post('Profiler.stop') as unknown as { profile: Profile };
  writeFileSync(join(outDir, `${name}.cpuprofile`), JSON.stringify(profile));
  const total = (profile.endTime - profile.startTime) / 1000;
  process.stdout.write(`\n## ${name} (${total.toFixed(0)} ms profiled)\n`);
  for (const h of hotSpots(profile)) {
    process.stdout.write(`${(h.share * 100).toFixed(1).padStart(5)}%  ${h.ms.toFixed(0).padStart(6)} ms  ${h.fn}  ${h.where}\n`);
  }
  return result;
}

async function main(): Promise<void> {
  const n = Number(arg('--n') ?? 10_000);
  const outDir = arg('--out') ?? join(CACHE_DIR, 'prof');
  mkdirSync(outDir, { recursive: true });
  const logger = silentLogger();
  const prefix = mkdtempSync(join(tmpdir(), 'irx-bench-prof-'));
  const runtime = defaultRuntime({ prefix, listenAddresses: ['127.0.0.1'], workerProcesses: '1', resolvers: ['127.0.0.1'] });
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  try {
    const opts = { n };
    const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, logger);
    for (const e of generateEvents(opts)) store.apply(e);
    const builder = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181, logger });
    const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger });
    let config = await profiled(session, 'full-sync-build', outDir, () => builder.build(store).config);
    let snap = await profiled(session, 'full-sync-snapshot', outDir, () => snapshot(config));
    // As the dynamic-config actor serialises: the whole list, then what changed.
    const backendsSerialiser = createBackendsSerialiser();
    const serialiseBackends = (list: ReturnType<typeof backendsPayload>) => backendsSerialiser.post(list).accepted();
    serialiseBackends(backendsPayload(config));
    await profiled(session, 'full-sync-render', outDir, () => renderer.render(config, runtime));
    // As bench/ab.ts's warm figures: a new builder and renderer over the same store, code optimised.
    for (let r = 0; r < 2; r++) createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger }).render(createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181, logger }).build(store).config, runtime);
    const warmBuilder = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 8181, logger });
    const warmConfig = await profiled(session, 'warm-build', outDir, () => warmBuilder.build(store).config);
    await profiled(session, 'warm-render', outDir, () => createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger }).render(warmConfig, runtime));
    await profiled(session, 'ingress-change-sync', outDir, () => {
      for (let k = 0; k < 3; k++) {
        const ing = ingressObject(101 + k * 997, opts, 2);
        ing.metadata.annotations = { ...ing.metadata.annotations, 'nginx.ingress.kubernetes.io/proxy-body-size': `${10 + k}m` };
        const key = `${ing.metadata.namespace}/${ing.metadata.name}`;
        store.apply({ kind: 'Ingress', type: 'update', key, object: ing });
        // With the change list, as the sync actor builds (without it every endpoint is rechecked).
        config = builder.build(store, [{ kind: 'Ingress', key }]).config;
        const next = snapshot(config);
        decide(snap, next);
        snap = next;
        renderer.render(config, runtime);
      }
    });
    await profiled(session, 'endpoint-change-sync', outDir, () => {
      for (let k = 0; k < 5; k++) {
        const slice = sliceObject(57 + k * 461, [{ address: `10.201.${k}.1`, port: 8080 }], opts, 2 + k);
        const key = `${slice.metadata.namespace}/${slice.metadata.name}`;
        store.apply({ kind: 'EndpointSlice', type: 'update', key, object: slice });
        config = builder.build(store, [{ kind: 'EndpointSlice', key }]).config;
        const next = snapshot(config);
        decide(snap, next);
        snap = next;
        serialiseBackends(backendsPayload(config));
      }
    });
    process.stdout.write(`\nprofiles written to ${outDir} (open in Chrome DevTools → Performance)\n`);
  } finally {
    session.disconnect();
    rmSync(prefix, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
