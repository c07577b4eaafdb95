// Ingresses that clash across namespaces, at --n Ingresses (default 10,000), in process, CPU ms:
// (1) the sync's build when new Ingresses repeat another namespace's host and paths (the oldest
//     keeps the paths, both Ingresses are warned of the takeover): one at a time, and 100 in one
//     sync, beside one plain new Ingress; with --host-ownership too (the newer namespace is refused
//     the host);
// (2) the quarantine's clash search: NGINX refuses a configuration holding two new Ingresses whose
//     stream-snippets listen on one port, in an error that names no line; the narrower probes small
//     configurations, each answered by a stand-in for `nginx -t` that refuses exactly that pair, so
//     the figures are the controller's CPU and the Ingresses in each probe (each probe is one
//     `nginx -t` of that many Ingresses in production: ~0.55 s per 1,000, docs/performance.md).
//   node --import tsx bench/clash.ts [--n 10000] [--adds 20]
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import { createModelBuilder, type ModelBuilder } from '../src/model/build.js';
import { createQuarantine } from '../src/model/core/quarantine.js';
import { createNarrower } from '../src/actors/quarantine.js';
import { silentLogger } from '../src/log.js';
import { ANNOTATION_REFERENCES } from '../src/model/ingress/annotations/index.js';
import type { Configuration } from '../src/model/core/types.js';
import type { ConfigMap, Ingress } from '../src/store/kube-types.js';
import type { SourceEvent } from '../src/store/events.js';
import { generateEvents, ingressObject } from './gen.js';
import { arg, cpuMs, emitFigures, loadAverage, median, printTable, round } from './lib.js';

const n = Number(arg('--n') ?? 10_000);
const adds = Number(arg('--adds') ?? 20);
const A = 'nginx.ingress.kubernetes.io';
const logger = silentLogger();
const loadBefore = loadAverage();

const keyOf = (i: Ingress) => `${i.metadata.namespace}/${i.metadata.name}`;
const add = (ing: Ingress): SourceEvent => ({ kind: 'Ingress', type: 'add', key: keyOf(ing), object: ing });
let clock = 0;
/** A new Ingress in namespace `ns`: generated Ingress `i`'s host and paths (a clash) or a host of its own. */
function newIngress(i: number, ns: string, name: string, clash: boolean, annotations: Record<string, string> = {}): Ingress {
  const base = ingressObject(i, { n, plain: true });
  const rule = base.spec.rules![0]!;
  return {
    ...base,
    metadata: { ...base.metadata, namespace: ns, name, uid: `${ns}-${name}`, annotations, creationTimestamp: new Date(Date.UTC(2030, 0, 1) + 1000 * clock++).toISOString() },
    spec: { ...base.spec, tls: undefined, rules: [{ ...rule, host: clash ? rule.host : `${ns}-${name}.clash.test` }] },
  };
}

function storeAt(configmap?: Record<string, string>) {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true, ...(configmap ? { configmap: 'ingress/nginx' } : {}) }, ANNOTATION_REFERENCES, logger);
  if (configmap) store.apply({ kind: 'ConfigMap', type: 'add', key: 'ingress/nginx', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ingress', name: 'nginx' }, data: configmap } as ConfigMap });
  for (const e of generateEvents({ n })) store.apply(e);
  return store;
}
const builderOf = (hostOwnership: boolean) => () => createModelBuilder({ annotationsPrefix: A, defaultServerPort: 18181, logger, dynamicRoutes: true, hostOwnership });

// ---- (1) the build of a sync with clashing Ingresses
interface BuildFigures { plain: number; one: number; hundred: number; warnings: number; path: string }
function builds(hostOwnership: boolean): BuildFigures {
  const store = storeAt();
  const builder = builderOf(hostOwnership)();
  builder.build(store);
  const timedBuild = (ings: Ingress[]): { ms: number; warnings: number; path: string } => {
    for (const ing of ings) store.apply(add(ing));
    const c = cpuMs();
    const r = builder.build(store, ings.map((ing) => ({ kind: 'Ingress' as const, key: keyOf(ing) })));
    const ms = cpuMs() - c;
    const named = new Set(ings.map((ing) => `Ingress ${keyOf(ing)}`));
    return { ms, warnings: r.warnings.filter((w) => named.has(w.object)).length, path: String(r.path) };
  };
  const plain: number[] = [];
  const one: number[] = [];
  let warnings = 0;
  let path = '';
  for (let k = 0; k < adds + 3; k++) {
    // Turns: a plain new Ingress, then one that repeats Ingress (k * 37)'s host and paths from another namespace.
    const p = timedBuild([newIngress(k, 'plain', `p-${k}`, false)]);
    const c = timedBuild([newIngress((k * 37) % n, 'clash', `c-${k}`, true)]);
    if (k < 3) continue;
    plain.push(p.ms);
    one.push(c.ms);
    warnings = c.warnings;
    path = c.path;
  }
  const hundred: number[] = [];
  for (let round = 0; round < 3; round++) {
    hundred.push(timedBuild(Array.from({ length: 100 }, (_, j) => newIngress((round * 1000 + j * 7 + 1) % n, `clash-${round}`, `h-${j}`, true))).ms);
  }
  return { plain: median(plain), one: median(one), hundred: median(hundred), warnings, path };
}

// ---- (2) the narrower's clash search
async function search(): Promise<{ ms: number; probes: number[]; quarantined: string[] }> {
  const store = storeAt({ 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' });
  const builder = builderOf(false)();
  const quarantine = createQuarantine();
  const narrower = createNarrower({ store, quarantine, builder, probeBuilder: builderOf(false), logger });
  narrower.applied(builder.build(quarantine.view(store)).config);
  const snippet = `server { listen 127.0.0.1:7000; proxy_pass 10.0.0.1:5432; }`;
  const older = newIngress(1, 'tenant-a', 'stream', false, { [`${A}/stream-snippet`]: snippet });
  const newer = newIngress(2, 'tenant-b', 'stream', false, { [`${A}/stream-snippet`]: snippet });
  store.apply(add(older));
  store.apply(add(newer));
  const config = builder.build(quarantine.view(store), [{ kind: 'Ingress', key: keyOf(older) }, { kind: 'Ingress', key: keyOf(newer) }]).config;
  const holds = (c: Configuration) => {
    const keys = new Set<string>();
    for (const s of c.servers) for (const l of s.locations) if (l.ingress) keys.add(`${l.ingress.namespace}/${l.ingress.name}`);
    return keys;
  };
  const probes: number[] = [];
  const output = 'nginx: [emerg] duplicate "127.0.0.1:7000" address and port pair';
  const c = cpuMs();
  await narrower.narrow({ config, rendered: null, output }, async (probe) => {
    const keys = holds(probe);
    probes.push(keys.size);
    return keys.has(keyOf(older)) && keys.has(keyOf(newer)) ? { ok: false, output } : { ok: true, output: '' };
  });
  return { ms: cpuMs() - c, probes, quarantined: quarantine.entries().map((e) => e.key) };
}

const off = builds(false);
const owned = builds(true);
const s = await search();
const r = (x: number) => String(round(x, 2));
printTable(`Ingresses clashing across namespaces at ${n}, CPU ms (medians: ${adds} single adds, 3 batches of 100); load average ${loadBefore} → ${loadAverage()}`, [
  { figure: 'build, one plain new Ingress', value: r(off.plain) },
  { figure: 'build, one new Ingress repeating another namespace\'s host+paths', value: `${r(off.one)} (build path ${off.path}; ${off.warnings} warnings on it)` },
  { figure: 'build, 100 such in one sync', value: r(off.hundred) },
  { figure: '--host-ownership: one plain / one clashing / 100 clashing', value: `${r(owned.plain)} / ${r(owned.one)} / ${r(owned.hundred)}` },
  { figure: 'clash search (stream-snippets on one port, error naming no line): narrowing CPU', value: r(s.ms) },
  { figure: '  probes (each an `nginx -t`), Ingresses with locations in each', value: `${s.probes.length}: ${s.probes.join(', ')}` },
  { figure: '  Ingresses probed in all (× ~0.55 ms of `nginx -t` each)', value: String(s.probes.reduce((a, b) => a + b, 0)) },
  { figure: '  set aside', value: s.quarantined.join(', ') || 'nothing' },
]);
emitFigures({
  clash_build_one_cpu_ms: round(off.one, 2), clash_build_hundred_cpu_ms: round(off.hundred, 2), clash_build_plain_cpu_ms: round(off.plain, 2),
  clash_search_cpu_ms: round(s.ms, 1), clash_search_probes: s.probes.length, clash_search_ingresses_probed: s.probes.reduce((a, b) => a + b, 0),
});
