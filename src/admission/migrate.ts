// `ingress-rx migrate-report`: what moving a cluster from ingress-nginx to ingress-rx changes, for
// every Ingress annotation and ConfigMap key in use — the catalogue's verdict on the key
// (./catalogue.ts) and the model's verdict on the value (./lint.ts) — with a summary a platform
// team reads before switching.
import { loadCluster, modelFindings, skippedIngresses, type LintFinding, type LintOptions, type ManifestText } from './lint.js';
import { annotationVerdict, configMapVerdict, type KeyStatus, type KeyVerdict } from './catalogue.js';
import { locationKey } from '../streams/manifests-locate.js';
import { httpRouteFit, type HTTPRouteFit } from './gateway-equivalents.js';

export interface KeyReport extends KeyVerdict {
  key: string;
  value: string;
  /** What the model says about this value (an error refuses it). */
  problems: Array<{ severity: LintFinding['severity']; message: string }>;
}

/** as-is: nothing changes; differences: documented differences only; changes: a refused or unknown key, or an error. */
export type IngressOutcome = 'as-is' | 'differences' | 'changes';

export interface IngressReport {
  key: string;
  file: string;
  line: number;
  outcome: IngressOutcome;
  annotations: KeyReport[];
  /** Findings on the Ingress outside its annotations (hosts, paths, backends, TLS). */
  problems: Array<{ severity: LintFinding['severity']; field: string; message: string }>;
  /** Whether it could be an HTTPRoute with no loss, and what has no full Gateway API equivalent (./gateway-equivalents.ts). */
  httpRoute: HTTPRouteFit;
}

export interface MigrationReport {
  configMap: { key: string; found: boolean; entries: KeyReport[] } | null;
  ingresses: IngressReport[];
  skipped: Array<{ key: string; reason: string }>;
  /** What was assumed of the Ingress class (LoadedCluster.assumed). */
  assumed: string | null;
  /** Every annotation key in use, with how many served Ingresses use it. */
  annotationKeys: Array<KeyVerdict & { key: string; uses: number }>;
  summary: {
    ingresses: Record<IngressOutcome, number> & { total: number };
    annotationKeys: Record<KeyStatus, number>;
    annotationUses: Record<KeyStatus, number>;
    configMapKeys: Record<KeyStatus, number>;
    refusedValues: number;
    /** Ingresses that could be HTTPRoutes with no loss. */
    httpRouteLossless: number;
  };
}

export interface MigrateOptions extends LintOptions {
  /** The ingress-nginx ConfigMap, `namespace/name` (also the store's --configmap). */
  configmap: string;
}

const STATUSES: readonly KeyStatus[] = ['identical', 'different', 'refused', 'unknown'];
const zero = () => Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<KeyStatus, number>;

export function migrationReport(files: readonly ManifestText[], opts: MigrateOptions): MigrationReport {
  const loaded = loadCluster(files, { ...opts, store: { ...opts.store, configmap: opts.configmap } });
  const findings = modelFindings(loaded, opts);
  const byObject = new Map<string, LintFinding[]>();
  for (const f of findings) {
    const list = byObject.get(f.object);
    if (list) list.push(f);
    else byObject.set(f.object, [f]);
  }
  // The key's status already says when ingress-rx does not read it.
  const fieldProblems = (object: string, field: string) => (byObject.get(object) ?? [])
    .filter((f) => f.field === field && f.rule !== 'unsupported-annotation' && f.rule !== 'unsupported-configmap-key')
    .map((f) => ({ severity: f.severity, message: f.message }));

  let configMap: MigrationReport['configMap'] = null;
  if (opts.configmap) {
    const cm = loaded.store.getConfigMap(opts.configmap);
    const object = `ConfigMap ${opts.configmap}`;
    configMap = {
      key: opts.configmap, found: cm !== undefined,
      entries: Object.entries(cm?.data ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, value]) => ({
        key, value, ...configMapVerdict(key), problems: fieldProblems(object, `data["${key}"]`),
      })),
    };
  }

  const start = `${opts.annotationsPrefix}/`;
  const uses = new Map<string, number>();
  const ingresses: IngressReport[] = loaded.store.listIngresses().map((ing) => {
    const key = `${ing.metadata.namespace}/${ing.metadata.name}`;
    const object = `Ingress ${key}`;
    const annotations: KeyReport[] = Object.entries(ing.metadata.annotations ?? {})
      .filter(([k]) => k.startsWith(start))
      .map(([k, value]) => {
        const name = k.slice(start.length);
        uses.set(name, (uses.get(name) ?? 0) + 1);
        return { key: name, value, ...annotationVerdict(name), problems: fieldProblems(object, `metadata.annotations["${k}"]`) };
      })
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    const problems = (byObject.get(object) ?? []).filter((f) => !f.field.startsWith('metadata.annotations['))
      .map((f) => ({ severity: f.severity, field: f.field, message: f.message }));
    const at = loaded.located.get(locationKey('Ingress', key));
    const changes = annotations.some((a) => a.status === 'refused' || a.status === 'unknown' || a.problems.some((p) => p.severity === 'deny'))
      || problems.some((p) => p.severity === 'deny');
    const differs = annotations.some((a) => a.status === 'different' || a.problems.length > 0) || problems.length > 0;
    const outcome: IngressOutcome = changes ? 'changes' : differs ? 'differences' : 'as-is';
    return { key, file: at?.file ?? '', line: at?.line ?? 0, outcome, annotations, problems, httpRoute: httpRouteFit(ing, opts.annotationsPrefix) };
  }).sort((a, b) => (a.key < b.key ? -1 : 1));

  const annotationKeys = [...uses].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, n]) => ({ key, uses: n, ...annotationVerdict(key) }));
  const summary: MigrationReport['summary'] = {
    ingresses: { total: ingresses.length, 'as-is': 0, differences: 0, changes: 0 },
    annotationKeys: zero(), annotationUses: zero(), configMapKeys: zero(), refusedValues: 0, httpRouteLossless: 0,
  };
  for (const i of ingresses) {
    summary.ingresses[i.outcome]++;
    if (i.httpRoute.lossless) summary.httpRouteLossless++;
  }
  for (const a of annotationKeys) {
    summary.annotationKeys[a.status]++;
    summary.annotationUses[a.status] += a.uses;
  }
  for (const e of configMap?.entries ?? []) summary.configMapKeys[e.status]++;
  for (const r of [...ingresses.flatMap((i) => i.annotations), ...(configMap?.entries ?? [])]) {
    if (r.problems.some((p) => p.severity === 'deny')) summary.refusedValues++;
  }
  const served = new Set(ingresses.map((i) => i.key));
  return { configMap, ingresses, skipped: skippedIngresses(loaded, served), assumed: loaded.assumed, annotationKeys, summary };
}
