// The store as it would be with a candidate Ingress, narrowed to what the candidate can affect:
// the Ingresses that share one of its server names (rule hosts, the default server `_`,
// server aliases) or hold a wildcard host over one of them, and of those sharing one of its
// backends, the ones that decide the backend's settings (the oldest user, and those setting a
// backend-level annotation). The model builder run over this view builds only the candidate's hosts.
import type { Ingress, IngressBackend } from '../store/kube-types.js';
import { byIngressOrder, timestamp } from '../store/store.js';
import type { StoreReader } from '../store/types.js';
import { SHARED_BACKEND_KEYS } from '../model/ingress/backend-plans.js';
import { wildcardOver } from '../model/ingress/takeovers.js';
import { ingressView } from '../store/ingress-view.js';

const DEFAULT_SERVER = '_';

/** The server names an Ingress takes part in: its rule hosts, `_` (a rule without host, or a catch-all), its aliases. */
export function serverNames(ing: Ingress, annotationsPrefix: string): string[] {
  const names = new Set<string>();
  const rules = ing.spec?.rules ?? [];
  for (const r of rules) names.add(r.host ? r.host : DEFAULT_SERVER);
  if (rules.length === 0 && ing.spec?.defaultBackend) names.add(DEFAULT_SERVER);
  const aliases = ing.metadata.annotations?.[`${annotationsPrefix}/server-alias`];
  if (typeof aliases === 'string') {
    for (const a of aliases.split(',')) {
      const name = a.trim().toLowerCase();
      if (name !== '') names.add(name);
    }
  }
  return [...names];
}

export const keyOf = (ing: Ingress) => `${ing.metadata.namespace ?? ''}/${ing.metadata.name}`;

/** The backends an Ingress uses (`namespace/service:port`, from its paths and spec.defaultBackend). */
export function backendKeys(ing: Ingress): string[] {
  const keys = new Set<string>();
  const add = (b: IngressBackend | undefined) => {
    const s = b?.service;
    if (s?.name) keys.add(`${ing.metadata.namespace ?? ''}/${s.name}:${s.port?.number ?? s.port?.name ?? ''}`);
  };
  add(ing.spec?.defaultBackend);
  for (const r of ing.spec?.rules ?? []) for (const p of r.http?.paths ?? []) add(p.backend);
  return [...keys];
}

/** What the review looks Ingresses up by: their server names and their backends. */
export interface NeighbourIndex {
  byName: ReadonlyMap<string, ReadonlySet<Ingress>>;
  byBackend: ReadonlyMap<string, ReadonlySet<Ingress>>;
}

/** The served Ingresses by server name and backend, changed one Ingress at a time. */
export interface LiveNeighbourIndex extends NeighbourIndex {
  /** The Ingress now stored under `key` (undefined: not served any more), in place of the one indexed. */
  set(key: string, ing: Ingress | undefined): void;
  /**
   * Brings the index to `list` (every served Ingress): the Ingresses not indexed yet or changed
   * are indexed, those gone dropped; a list already indexed costs nothing.
   */
  follow(list: readonly Ingress[]): void;
}

interface Entry { ing: Ingress; names: readonly string[]; backends: readonly string[] }

/**
 * Server name and backend → the served Ingresses that name it. A change touches the changed
 * Ingress's own names and backends only, so a review right after a change costs what one before it does.
 */
export function createNeighbourIndex(annotationsPrefix: string): LiveNeighbourIndex {
  const byName = new Map<string, Set<Ingress>>();
  const byBackend = new Map<string, Set<Ingress>>();
  const entries = new Map<string, Entry>();
  let followed: readonly Ingress[] | null = null;
  const put = (index: Map<string, Set<Ingress>>, key: string, ing: Ingress) => {
    const at = index.get(key);
    if (at) at.add(ing);
    else index.set(key, new Set([ing]));
  };
  const drop = (index: Map<string, Set<Ingress>>, key: string, ing: Ingress) => {
    const at = index.get(key);
    if (at?.delete(ing) && at.size === 0) index.delete(key);
  };
  function set(key: string, ing: Ingress | undefined): void {
    const old = entries.get(key);
    if (old?.ing === ing) return;
    followed = null;
    if (old) {
      for (const n of old.names) drop(byName, n, old.ing);
      for (const b of old.backends) drop(byBackend, b, old.ing);
      entries.delete(key);
    }
    if (!ing) return;
    const entry = { ing, names: serverNames(ing, annotationsPrefix), backends: backendKeys(ing) };
    entries.set(key, entry);
    for (const n of entry.names) put(byName, n, ing);
    for (const b of entry.backends) put(byBackend, b, ing);
  }
  return {
    byName, byBackend, set,
    follow(list) {
      if (followed === list) return;
      const listed = new Set<string>();
      for (const ing of list) {
        const key = keyOf(ing);
        listed.add(key);
        set(key, ing);
      }
      for (const key of [...entries.keys()]) if (!listed.has(key)) set(key, undefined);
      followed = list;
    },
  };
}

let backendAnnotationKeys: { prefix: string; keys: readonly string[] } | null = null;
/** The annotations (with the prefix) that set a shared backend's settings. */
function backendAnnotationsOf(prefix: string): readonly string[] {
  if (backendAnnotationKeys?.prefix !== prefix) backendAnnotationKeys = { prefix, keys: SHARED_BACKEND_KEYS.map((k) => `${prefix}/${k}`) };
  return backendAnnotationKeys.keys;
}

/**
 * The served Ingresses sharing a server name with the candidate, or holding the wildcard host one
 * of its names falls under (its host takes that name's requests), and those deciding the
 * settings of a backend it uses, with the candidate in place of its stored version, in the
 * store's order.
 */
export function neighbourhood(candidate: Ingress, index: NeighbourIndex, annotationsPrefix: string): Ingress[] {
  const key = keyOf(candidate);
  const picked = new Set<Ingress>();
  for (const name of serverNames(candidate, annotationsPrefix)) {
    const wildcard = wildcardOver(name);
    for (const n of wildcard === null ? [name] : [name, wildcard]) {
      for (const ing of index.byName.get(n) ?? []) if (keyOf(ing) !== key) picked.add(ing);
    }
  }
  const backendAnnotations = backendAnnotationsOf(annotationsPrefix);
  const sets = (ing: Ingress) => {
    const annotations = ing.metadata.annotations;
    return annotations !== undefined && backendAnnotations.some((k) => annotations[k] !== undefined);
  };
  for (const b of backendKeys(candidate)) {
    let oldest: { t: number; key: string; ing: Ingress } | null = null;
    for (const ing of index.byBackend.get(b) ?? []) {
      const k = keyOf(ing);
      if (k === key) continue;
      if (sets(ing)) picked.add(ing);
      const e = { t: timestamp(ing), key: k, ing };
      if (!oldest || byIngressOrder(e, oldest) < 0) oldest = e;
    }
    if (oldest) picked.add(oldest.ing);
  }
  // Pushed, not mapped: V8's `map` makes a packed array in the interpreter and a holey one once
  // inlined in optimised code, and code optimised on the one kind (this sort, the model build)
  // is thrown away on meeting the other and compiled again, a stall of tens of milliseconds in
  // a review long after the webhook started.
  const list: Array<{ t: number; key: string; ing: Ingress }> = [];
  for (const ing of picked) list.push({ t: timestamp(ing), key: keyOf(ing), ing });
  list.push({ t: timestamp(candidate), key, ing: candidate });
  list.sort(byIngressOrder);
  const ingresses: Ingress[] = [];
  for (const e of list) ingresses.push(e.ing);
  return ingresses;
}

/** A StoreReader whose served Ingresses are `ingresses` (with `candidate` in place of its stored version); every other look-up goes to the store. */
export function storeView(store: StoreReader, ingresses: Ingress[], candidate?: Ingress): StoreReader {
  const key = candidate ? keyOf(candidate) : null;
  return ingressView(store, { listIngresses: () => ingresses, getIngress: (k) => (k === key ? candidate : store.getIngress(k)) });
}
