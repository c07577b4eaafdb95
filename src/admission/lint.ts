// `ingress-rx lint`: the webhook's checks, offline, over manifest files or a `kubectl get -o yaml`
// dump. The files become a store exactly as local mode reads them, the controller's model is built
// once over all of it, and every warning becomes a finding at `file:line` that is an error or a
// warning by the webhook's own table (./verdict.ts).
import { relative } from 'node:path';
import { silentLogger } from '../log.js';
import type { Ingress } from '../store/kube-types.js';
import { createStore } from '../store/store.js';
import type { Store, StoreOptions } from '../store/types.js';
import { createManifestCluster } from '../streams/manifests-cluster.js';
import { parseManifestFile } from '../streams/manifests-parse.js';
import { locateObjects, locationKey, type ObjectLocation } from '../streams/manifests-locate.js';
import { createModelBuilder } from '../model/build.js';
import type { ModelWarning } from '../model/core/types.js';
import { warnRuleOf, type Severity } from './verdict.js';
import { ANNOTATION_REFERENCES } from '../model/ingress/annotations/index.js';
import { DEFAULT_BUDGETS, overPathBudgets, type Budgets } from '../model/core/budgets.js';

export interface LintFinding {
  severity: Severity;
  /** '' when the finding is about no file (a flag naming an object that is not there). */
  file: string;
  line: number;
  object: string;
  field: string;
  message: string;
  /** The warn rule that made it a warning. */
  rule?: string;
}

export interface LintOptions {
  store: StoreOptions;
  annotationsPrefix: string;
  defaultServerPort?: number;
  /** Certificate expiry and the creation time of objects without one. */
  now?: () => Date;
  /** The controller's path budgets (src/model/core/budgets.ts); the defaults when absent. */
  budgets?: Budgets;
  /** The controller's --host-ownership: other namespaces' rules for a host are refused. */
  hostOwnership?: boolean;
}

export interface ManifestText { file: string; text: string }

/** Manifest files read as one cluster, with where each object is. */
export interface LoadedCluster {
  store: Store;
  /** Every Ingress of the files by `namespace/name`, served or not. */
  ingresses: Map<string, Ingress>;
  /** `locationKey(kind, key)` → where the object is. */
  located: Map<string, ObjectLocation>;
  /** Syntax errors and objects defined twice. */
  findings: LintFinding[];
  objects: number;
  /**
   * What was assumed because the input holds no IngressClass (manifests rarely carry the
   * cluster's): an ingressClassName equal to --ingress-class names this controller's class. null
   * when nothing was.
   */
  assumed: string | null;
}

export interface LintResult {
  findings: LintFinding[];
  files: number;
  objects: number;
  /** Ingresses this controller would serve, and the others with the reason. */
  served: string[];
  skipped: Array<{ key: string; reason: string }>;
  /** LoadedCluster.assumed. */
  assumed: string | null;
}

/** Reads the files as local mode would ("the last file wins": files in name order). */
export function loadCluster(files: readonly ManifestText[], opts: LintOptions): LoadedCluster {
  const now = opts.now ?? (() => new Date());
  const findings: LintFinding[] = [];
  const cluster = createManifestCluster({ logger: silentLogger(), now: () => now().getTime() });
  const located = new Map<string, ObjectLocation>();
  const firstSeen = new Map<string, { file: string; line: number }>();
  let objects = 0;
  let ingressClasses = 0;
  const ordered = [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  for (const { file, text } of ordered) {
    const parsed = parseManifestFile(file, text);
    for (const e of parsed.errors) findings.push({ severity: 'deny', file, line: e.line, object: '', field: '', message: e.reason });
    const where = locateObjects(file, text);
    for (const o of parsed.objects) {
      objects++;
      if (o.kind === 'IngressClass') ingressClasses++;
      const id = locationKey(o.kind, o.key);
      const at = where.get(id);
      const line = at?.line ?? o.line;
      const before = firstSeen.get(id);
      if (before) {
        findings.push({
          severity: 'warn', file, line, object: `${o.kind} ${o.key}`, field: '', rule: 'defined-twice',
          message: `also defined at ${before.file}:${before.line}; the later one is used`,
        });
      } else {
        firstSeen.set(id, { file, line });
      }
      located.set(id, at ?? { file, line, lineOf: () => line });
    }
    cluster.setFile(file, parsed);
  }
  // Without any IngressClass in the input, `ingressClassName: nginx` would name a class that is
  // not there and every such Ingress would be skipped unchecked: take --ingress-class as ours.
  const assume = ingressClasses === 0 && !opts.store.ingressClassByName;
  const notes: string[] = [];
  if (assume) notes.push(`the input holds no IngressClass: ingressClassName ${JSON.stringify(opts.store.ingressClass)} (--ingress-class) is taken as this controller's class`);
  const l4 = l4ConfigMapsAssumed(opts.store, [...located.keys()], notes);
  const store = createStore({ ...opts.store, ...l4, ...(assume ? { ingressClassByName: true } : {}) }, ANNOTATION_REFERENCES);
  const assumed = notes.length > 0 ? notes.join('; ') : null;
  const ingresses = new Map<string, Ingress>();
  for (const e of cluster.commit()) {
    store.apply(e);
    if (e.kind === 'Ingress') ingresses.set(e.key, e.object as Ingress);
  }
  return { store, ingresses, located, findings, objects, assumed };
}

/**
 * Without --tcp-services-configmap / --udp-services-configmap, the one ConfigMap named as in
 * ingress-nginx's guide to TCP/UDP services (`tcp-services`, `udp-services`) is taken for it, so
 * its entries are checked; each assumption becomes a note.
 */
function l4ConfigMapsAssumed(options: StoreOptions, ids: string[], notes: string[]): Partial<StoreOptions> {
  const prefix = locationKey('ConfigMap', '');
  const configMaps = ids.filter((id) => id.startsWith(prefix)).map((id) => id.slice(prefix.length));
  const pick = (given: string, name: string, flag: string): string | undefined => {
    const found = configMaps.filter((key) => key.endsWith(`/${name}`));
    if (given || found.length !== 1) return undefined;
    notes.push(`ConfigMap ${found[0]} is taken as ${flag}`);
    return found[0];
  };
  const tcp = pick(options.tcpServicesConfigmap, 'tcp-services', '--tcp-services-configmap');
  const udp = pick(options.udpServicesConfigmap, 'udp-services', '--udp-services-configmap');
  return { ...(tcp ? { tcpServicesConfigmap: tcp } : {}), ...(udp ? { udpServicesConfigmap: udp } : {}) };
}

/** The model's warnings over a loaded cluster, placed and graded. */
export function modelFindings(loaded: LoadedCluster, opts: LintOptions): LintFinding[] {
  const built = createModelBuilder({
    annotationsPrefix: opts.annotationsPrefix, defaultServerPort: opts.defaultServerPort ?? 8181, now: opts.now, hostOwnership: opts.hostOwnership,
  }).build(loaded.store);
  // What the controller would set aside for its paths (the byte budgets need the data plane's render: not checked here).
  const overBudget = overPathBudgets(loaded.store.listIngresses(), opts.budgets ?? DEFAULT_BUDGETS)
    .map((o) => ({ object: `Ingress ${o.key}`, field: 'spec.rules', message: `${o.reason.replace(/^over budget: /, '')}; the controller sets it aside` }));
  return [...overBudget, ...built.warnings].map((w) => finding(w, loaded));
}

/** Lints the given files as one cluster; `file` names are shown as given. */
export function lintManifests(files: readonly ManifestText[], opts: LintOptions): LintResult {
  const loaded = loadCluster(files, opts);
  // Manifests in a repository hold no endpoints: "no ready endpoints" would be said of every
  // backend. Only a dump that has EndpointSlices (or Endpoints) can tell.
  const hasEndpoints = [...loaded.located.keys()].some((id) => id.startsWith('EndpointSlice\0'));
  const model = modelFindings(loaded, opts).filter((f) => hasEndpoints || !NO_READY_ENDPOINTS.test(f.message));
  const findings = [...loaded.findings, ...model].sort(byPlace);
  const served = loaded.store.listIngresses().map((i) => `${i.metadata.namespace}/${i.metadata.name}`);
  return { findings, files: files.length, objects: loaded.objects, served, skipped: skippedIngresses(loaded, new Set(served)), assumed: loaded.assumed };
}

export function skippedIngresses(loaded: LoadedCluster, served: Set<string>): Array<{ key: string; reason: string }> {
  const out: Array<{ key: string; reason: string }> = [];
  for (const [key, ing] of loaded.ingresses) if (!served.has(key)) out.push({ key, reason: loaded.store.serves(ing).reason });
  return out.sort((a, b) => (a.key < b.key ? -1 : 1));
}

const KIND_AND_KEY = /^(\S+) (\S+)$/;
const NO_READY_ENDPOINTS = /has no ready endpoints \(503\)$/;

function finding(w: ModelWarning, loaded: LoadedCluster): LintFinding {
  const m = KIND_AND_KEY.exec(w.object);
  const at = m ? loaded.located.get(locationKey(m[1]!, m[2]!)) : undefined;
  const ing = m?.[1] === 'Ingress' ? loaded.store.getIngress(m[2]!) : undefined;
  const rule = warnRuleOf(w, { annotations: ing?.metadata.annotations ?? {} });
  return {
    severity: rule ? 'warn' : 'deny', file: at?.file ?? '', line: at ? at.lineOf(w.field) : 0,
    object: w.object, field: w.field, message: w.message, ...(rule ? { rule: rule.name } : {}),
  };
}

function byPlace(a: LintFinding, b: LintFinding): number {
  return (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) || a.line - b.line || (a.message < b.message ? -1 : a.message > b.message ? 1 : 0);
}

/** `file:line: error: Ingress ns/name field: message`, the way compilers print, for editors and CI logs. */
export function formatFinding(f: LintFinding, cwd?: string): string {
  const place = f.file ? `${cwd ? relative(cwd, f.file) || f.file : f.file}:${f.line}` : '(flags)';
  const what = [f.object, f.field].filter((x) => x !== '').join(' ');
  return `${place}: ${f.severity === 'deny' ? 'error' : 'warning'}: ${what ? `${what}: ` : ''}${f.message}`;
}
