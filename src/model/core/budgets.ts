// Sizes have owners: what one Ingress, or one namespace's Ingresses together, may put into the data
// plane — paths (NGINX's memory and reload time grow with them), bytes of the Lua payloads (the
// route table, backends, certificates: the configuration endpoint and its shared dicts have fixed
// sizes) and bytes of nginx.conf. Whoever passes a budget is named and set aside, never the
// others: one object over a per-object budget; the youngest Ingresses of a namespace past its
// budget (the older ones keep being served); and past a capacity of the data plane itself, the
// youngest Ingress of the namespace holding the most of it, until the rest fits.
import type { Ingress } from '../../store/kube-types.js';
import { hostRoutes, hostRoutesText, type RouteEntry, type RoutesPayload } from './routes-payload.js';
import type { Backend, Configuration, Server } from './types.js';

export interface Budgets {
  /** Paths one Ingress may hold (a rule counts its paths, at least one); 0: no limit. */
  readonly maxPathsPerIngress: number;
  /** Paths the Ingresses of one namespace may hold together; 0: no limit. */
  readonly maxPathsPerNamespace: number;
  /** Bytes one Ingress may put into the route table, and into nginx.conf; 0: no limit. */
  readonly maxBytesPerIngress: number;
  /**
   * Bytes one namespace may put into the Lua payloads together (its Ingresses' route entries, its
   * Services' backends, its Secrets' certificates), and into nginx.conf; 0: no limit.
   */
  readonly maxBytesPerNamespace: number;
}

export const DEFAULT_BUDGETS: Budgets = {
  maxPathsPerIngress: 1000,
  maxPathsPerNamespace: 10_000,
  maxBytesPerIngress: 2 * 1024 * 1024,
  maxBytesPerNamespace: 8 * 1024 * 1024,
};

/** What each budget's flag does (`controller --help`, `local --help`, docs/controller.md). */
export const BUDGET_HELP: Readonly<Record<keyof Budgets, string>> = {
  maxPathsPerIngress: 'Paths one Ingress may hold (each rule counts its paths, at least one); a bigger Ingress is set aside and named, and refused by the webhook. 0: no limit (docs/security.md, "Sizes have owners").',
  maxPathsPerNamespace: 'Paths the Ingresses of one namespace may hold together; past it the namespace\'s youngest Ingresses are set aside and named, the older ones served. 0: no limit.',
  maxBytesPerIngress: 'Bytes one Ingress may put into the route table, and into nginx.conf (k, m, g allowed); a bigger one is set aside and named. 0: no limit.',
  maxBytesPerNamespace: 'Bytes one namespace may put into the Lua payloads together (route entries, its Services\' backends, its Secrets\' certificates), and into nginx.conf; past it its youngest Ingresses are set aside and named. 0: no limit.',
};

/** A budget's size as a flag gives it: bytes, or with k, m or g (1024-based); 0 turns the budget off. */
export function parseBudgetBytes(raw: string): number | null {
  const m = /^(\d{1,12})([kKmMgG]?)$/.exec(raw.trim());
  if (!m) return null;
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  const n = Number(m[1]) * unit;
  return Number.isSafeInteger(n) ? n : null;
}

/** The flag of each budget, for messages (the flags are ingress-rx's own). */
export const BUDGET_FLAGS: Readonly<Record<keyof Budgets, string>> = {
  maxPathsPerIngress: '--max-paths-per-ingress',
  maxPathsPerNamespace: '--max-paths-per-namespace',
  maxBytesPerIngress: '--max-bytes-per-ingress',
  maxBytesPerNamespace: '--max-bytes-per-namespace',
};

/**
 * How a setting-aside is let go: `object` when the Ingress changes; `namespace` when anything in
 * its namespace changes (room may have been made); `cluster` when any Ingress changes too.
 */
export type BudgetScope = 'object' | 'namespace' | 'cluster';

export interface OverBudget {
  /** `namespace/name` of the Ingress set aside. */
  readonly key: string;
  readonly scope: BudgetScope;
  readonly reason: string;
}

const keyOf = (ing: Ingress) => `${ing.metadata.namespace ?? 'default'}/${ing.metadata.name}`;
const namespaceOf = (key: string) => key.slice(0, key.indexOf('/'));

/** `1536 KiB`, `3.2 MiB`: a size in a message. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${Math.round(n / 102.4) / 10} KiB`;
  return `${Math.round(n / (1024 * 102.4)) / 10} MiB`;
}

const pathCounts = new WeakMap<Ingress, number>();

/** The paths of an Ingress as the budgets count them: each rule's paths, at least one per rule (its host's root), or one for a catch-all. */
export function ingressPathCount(ing: Ingress): number {
  let n = pathCounts.get(ing);
  if (n === undefined) {
    const rules = Array.isArray(ing.spec?.rules) ? ing.spec.rules : [];
    n = rules.length === 0 && ing.spec?.defaultBackend ? 1 : 0;
    for (const r of rules) {
      const paths = r?.http?.paths;
      n += Math.max(1, Array.isArray(paths) ? paths.length : 0);
    }
    pathCounts.set(ing, n);
  }
  return n;
}

/** Why an Ingress alone is over the per-Ingress path budget, or null: what the webhook and `lint` deny. */
export function pathBudgetProblem(ing: Ingress, budgets: Budgets): string | null {
  const n = ingressPathCount(ing);
  if (budgets.maxPathsPerIngress > 0 && n > budgets.maxPathsPerIngress) {
    return `${n} paths, more than one Ingress may hold (${BUDGET_FLAGS.maxPathsPerIngress}=${budgets.maxPathsPerIngress})`;
  }
  return null;
}

/**
 * The Ingresses (served, oldest first) over the path budgets: each over the per-Ingress budget,
 * and in each namespace those past its budget once the older ones are counted.
 */
export function overPathBudgets(list: readonly Ingress[], budgets: Budgets): OverBudget[] {
  if (budgets.maxPathsPerIngress <= 0 && budgets.maxPathsPerNamespace <= 0) return [];
  const out: OverBudget[] = [];
  const held = new Map<string, number>();
  for (const ing of list) {
    const n = ingressPathCount(ing);
    if (budgets.maxPathsPerIngress > 0 && n > budgets.maxPathsPerIngress) {
      out.push({ key: keyOf(ing), scope: 'object', reason: `over budget: spec.rules holds ${pathBudgetProblem(ing, budgets)}` });
      continue;
    }
    const ns = ing.metadata.namespace ?? 'default';
    const before = held.get(ns) ?? 0;
    if (budgets.maxPathsPerNamespace > 0 && before + n > budgets.maxPathsPerNamespace) {
      out.push({
        key: keyOf(ing), scope: 'namespace',
        reason: `over budget: namespace ${ns} holds ${before} paths in older Ingresses and this one adds ${n}, more than a namespace may hold (${BUDGET_FLAGS.maxPathsPerNamespace}=${budgets.maxPathsPerNamespace}); the older ones are served`,
      });
      continue;
    }
    held.set(ns, before + n);
  }
  return out;
}

// ---- bytes of the Lua payloads

const backendBytes = new WeakMap<Backend, number>();

/** Bytes of one backend in the backends payload (memoised per backend object). */
export function backendPayloadBytes(b: Backend): number {
  let n = backendBytes.get(b);
  if (n === undefined) {
    n = JSON.stringify(b).length + 1;
    backendBytes.set(b, n);
  }
  return n;
}

/** What the data plane can hold, in bytes. */
export interface PayloadCapacity {
  /** The route table and the backends together (they share the configuration_data dict). */
  readonly routesAndBackends: number;
  /** Each POST's body. */
  readonly post: number;
  /** The certificates (certificate_data dict). */
  readonly certificates: number;
}

interface Charge { routes: number; backends: number; certificates: number }
const total = (c: Charge) => c.routes + c.backends + c.certificates;

/**
 * What each served Ingress puts into the Lua payloads: its route entries, and the backends and
 * certificates it is the oldest user of (a Service's backend belongs to the namespace's oldest
 * Ingress using it; set that one aside and the next one carries it).
 */
function charges(config: Configuration, routes: RoutesPayload, order: ReadonlyMap<string, number>): Map<string, Charge> {
  const out = new Map<string, Charge>();
  const charge = (key: string) => {
    let c = out.get(key);
    if (!c) out.set(key, (c = { routes: 0, backends: 0, certificates: 0 }));
    return c;
  };
  for (const entries of Object.values(routes.hosts)) {
    for (const [k, n] of hostRoutesText(entries).byIngress) if (order.has(k)) charge(k).routes += n;
  }
  const oldest = new Map<string, string>();
  const certOwner = new Map<string, string>();
  const older = (a: string | undefined, b: string) => (a === undefined || order.get(b)! < order.get(a)! ? b : a);
  for (const s of config.servers) {
    for (const loc of s.locations) {
      if (!loc.ingress) continue;
      const k = `${loc.ingress.namespace}/${loc.ingress.name}`;
      if (!order.has(k)) continue;
      oldest.set(loc.backend, older(oldest.get(loc.backend), k));
      if (loc.settings.defaultBackend) oldest.set(loc.settings.defaultBackend, older(oldest.get(loc.settings.defaultBackend), k));
      if (s.certificate !== null && s.tlsSecret !== null && namespaceOf(s.tlsSecret) === loc.ingress.namespace) {
        certOwner.set(s.certificate, older(certOwner.get(s.certificate), k));
      }
    }
  }
  for (const b of config.backends) {
    const k = b.service ? oldest.get(b.name) : undefined;
    if (k !== undefined) charge(k).backends += backendPayloadBytes(b);
  }
  for (const [uid, k] of certOwner) {
    const cert = config.certificates[uid];
    if (cert) charge(k).certificates += cert.pem.length + uid.length + 8;
  }
  return out;
}

/** What the Lua payloads hold once the Ingresses over budget are set aside. */
export interface PayloadTotals {
  readonly routesAndBackends: number;
  readonly certificates: number;
}

/**
 * The Ingresses over the byte budgets of the Lua payloads, and past the data plane's capacity.
 * `order`: the served Ingresses' keys, oldest first.
 */
export function overPayloadBudgets(
  config: Configuration, routes: RoutesPayload, order: () => readonly string[], budgets: Budgets, capacity: PayloadCapacity,
  meter: (config: Configuration) => PayloadSums = createPayloadMeter(),
): { over: OverBudget[]; totals: PayloadTotals; named?: string[] } {
  const quick = meter(config);
  const byNs = [...quick.byNamespace.values()];
  const fits = quick.totals.routes + quick.totals.backends <= Math.min(capacity.routesAndBackends, capacity.post)
    && quick.totals.certificates <= Math.min(capacity.certificates, capacity.post)
    && (budgets.maxBytesPerIngress <= 0 || byNs.every((c) => c.routes <= budgets.maxBytesPerIngress))
    && (budgets.maxBytesPerNamespace <= 0 || byNs.every((c) => total(c) <= budgets.maxBytesPerNamespace));
  // No namespace holds enough for any of it to be over: nothing to attribute (the usual case).
  if (fits) return { over: [], totals: { routesAndBackends: quick.totals.routes + quick.totals.backends, certificates: quick.totals.certificates } };
  const keys = order();
  const rank = new Map(keys.map((k, i) => [k, i] as const));
  const byIngress = charges(config, routes, rank);
  const out: OverBudget[] = [];
  const setAside = new Set<string>();
  const kept = new Map<string, Charge>();
  const held = new Map<string, Charge>();
  for (const key of keys) {
    const c = byIngress.get(key);
    if (!c) continue;
    if (budgets.maxBytesPerIngress > 0 && c.routes > budgets.maxBytesPerIngress) {
      out.push({ key, scope: 'object', reason: `over budget: its route entries take ${formatBytes(c.routes)}, more than one Ingress may put into the route table (${BUDGET_FLAGS.maxBytesPerIngress}=${budgets.maxBytesPerIngress})` });
      setAside.add(key);
      continue;
    }
    const ns = namespaceOf(key);
    const h = held.get(ns) ?? { routes: 0, backends: 0, certificates: 0 };
    if (budgets.maxBytesPerNamespace > 0 && total(h) + total(c) > budgets.maxBytesPerNamespace) {
      out.push({
        key, scope: 'namespace',
        reason: `over budget: namespace ${ns} puts ${formatBytes(total(h))} into the Lua payloads with its older Ingresses and this one adds ${formatBytes(total(c))} (${describe(c)}), more than a namespace may (${BUDGET_FLAGS.maxBytesPerNamespace}=${budgets.maxBytesPerNamespace}); the older ones are served`,
      });
      setAside.add(key);
      continue;
    }
    held.set(ns, { routes: h.routes + c.routes, backends: h.backends + c.backends, certificates: h.certificates + c.certificates });
    kept.set(key, c);
  }

  // The capacities: what is not charged to an Ingress (the default backend, the host map) counts too.
  let routesBytes = quick.totals.routes;
  let backendsBytes = quick.totals.backends;
  let certBytes = quick.totals.certificates;
  for (const key of setAside) {
    const c = byIngress.get(key)!;
    routesBytes -= c.routes;
    backendsBytes -= c.backends;
    certBytes -= c.certificates;
  }
  const over = () => {
    if (routesBytes + backendsBytes > capacity.routesAndBackends || routesBytes > capacity.post || backendsBytes > capacity.post) return 'routesAndBackends' as const;
    if (certBytes > capacity.certificates || certBytes > capacity.post) return 'certificates' as const;
    return null;
  };
  const named: string[] = [];
  for (let part = over(); part !== null; part = over()) {
    // The namespace holding the most of the part that is full gives up its youngest Ingress there.
    const share = (c: Charge) => (part === 'certificates' ? c.certificates : c.routes + c.backends);
    // What a namespace holds besides its Ingresses (its HTTPRoutes' route entries and backends)
    // counts too: a tenant filling the table with HTTPRoutes holds the most, not its neighbours.
    const byNamespace = new Map<string, number>();
    for (const [ns, c] of quick.byNamespace) byNamespace.set(ns, share(c));
    for (const [k, c] of byIngress) byNamespace.set(namespaceOf(k), (byNamespace.get(namespaceOf(k)) ?? 0) - share(c));
    for (const [ns, n] of byNamespace) byNamespace.set(ns, Math.max(0, n));
    for (const [k, c] of kept) byNamespace.set(namespaceOf(k), (byNamespace.get(namespaceOf(k)) ?? 0) + share(c));
    let biggest: string | null = null;
    for (const [ns, n] of byNamespace) if (n > 0 && (biggest === null || n > byNamespace.get(biggest)! || (n === byNamespace.get(biggest)! && ns < biggest))) biggest = ns;
    if (biggest === null) break;
    let youngest: string | null = null;
    for (const k of kept.keys()) if (namespaceOf(k) === biggest && share(kept.get(k)!) > 0) youngest = k;
    if (youngest === null) {
      // What it holds is not Ingresses, which alone can be set aside: nobody else's are instead.
      named.push(`the data plane cannot hold ${part === 'certificates' ? 'the certificates' : 'the route table and backends'}; namespace ${biggest} holds the most (${formatBytes(byNamespace.get(biggest)!)}) in objects other than Ingresses (HTTPRoutes), so no other namespace's Ingress is set aside for it`);
      break;
    }
    const c = kept.get(youngest)!;
    kept.delete(youngest);
    routesBytes -= c.routes;
    backendsBytes -= c.backends;
    certBytes -= c.certificates;
    const what = part === 'certificates' ? `the certificates (${formatBytes(capacity.certificates)})` : `the route table and backends (${formatBytes(capacity.routesAndBackends)}, ${formatBytes(capacity.post)} per POST)`;
    out.push({
      key: youngest, scope: 'cluster',
      reason: `over budget: the data plane cannot hold ${what} with every namespace's Ingresses; namespace ${biggest} holds the most (${formatBytes(byNamespace.get(biggest)!)}) and this is its youngest Ingress there (${describe(c)})`,
    });
  }
  return { over: out, totals: { routesAndBackends: routesBytes + backendsBytes, certificates: certBytes }, ...(named.length > 0 ? { named } : {}) };
}

const backendSums = new WeakMap<readonly Backend[], { total: number; byNamespace: Map<string, number> }>();

/** Bytes of the backends payload, in all and per namespace; once per list (the model hands back an unchanged list as the same array). */
function backendTotals(list: readonly Backend[]): { total: number; byNamespace: Map<string, number> } {
  let sums = backendSums.get(list);
  if (!sums) {
    sums = { total: 0, byNamespace: new Map() };
    for (const b of list) {
      const n = backendPayloadBytes(b);
      sums.total += n;
      if (b.service) sums.byNamespace.set(b.service.metadata.namespace, (sums.byNamespace.get(b.service.metadata.namespace) ?? 0) + n);
    }
    backendSums.set(list, sums);
  }
  return sums;
}

/** What the payloads hold, in all and per namespace (no Ingress holds more than its namespace). */
export interface PayloadSums { totals: Charge; byNamespace: Map<string, Charge> }

/**
 * Sums the payloads sync after sync: only the servers that changed since the last call are
 * counted again (the model hands back unchanged servers as the same objects, in hostname order),
 * so a sync at 10k hosts costs a comparison per server, not a walk through every entry.
 */
export function createPayloadMeter(): (config: Configuration) => PayloadSums {
  let prev: readonly Server[] = [];
  let prevSettings: unknown = null;
  let prevDynamic = false;
  /** What was counted for each server, so that the same is taken off when it goes. */
  let counted = new WeakMap<Server, readonly RouteEntry[]>();
  let routesTotal = 0;
  const routesByNs = new Map<string, number>();
  const count = (entries: readonly RouteEntry[], sign: 1 | -1) => {
    const t = hostRoutesText(entries);
    routesTotal += sign * (t.text.length + 1);
    for (const [ns, n] of t.byNamespace) {
      const v = (routesByNs.get(ns) ?? 0) + sign * n;
      if (v === 0) routesByNs.delete(ns);
      else routesByNs.set(ns, v);
    }
  };
  const add = (s: Server, config: Configuration) => {
    if (!config.dynamicRoutes || s.staticBecause !== null) return;
    const entries = hostRoutes(s, config.settings);
    counted.set(s, entries);
    count(entries, 1);
  };
  const remove = (s: Server) => {
    const entries = counted.get(s);
    if (entries) count(entries, -1);
  };
  const before = (a: Server, b: Server) => (a.hostname === '_' ? b.hostname !== '_' : b.hostname !== '_' && a.hostname < b.hostname);
  return (config) => {
    const next = config.servers;
    if (config.settings !== prevSettings || config.dynamicRoutes !== prevDynamic) {
      // Every server's entries depend on the settings: count again from nothing.
      prev = [];
      counted = new WeakMap();
      routesTotal = 0;
      routesByNs.clear();
      prevSettings = config.settings;
      prevDynamic = config.dynamicRoutes;
    }
    if (next !== prev) {
      let i = 0;
      let j = 0;
      while (i < prev.length || j < next.length) {
        const a = prev[i];
        const b = next[j];
        if (a !== undefined && a === b) { i++; j++; continue; }
        if (b === undefined || (a !== undefined && before(a, b))) { remove(a!); i++; continue; }
        if (a === undefined || before(b, a)) { add(b, config); j++; continue; }
        // The same host, changed.
        remove(a);
        add(b, config);
        i++;
        j++;
      }
      prev = next;
    }
    const backends = backendTotals(config.backends);
    const certs = certificateTotals(config.certificates);
    const byNamespace = new Map<string, Charge>();
    const of = (ns: string) => {
      let c = byNamespace.get(ns);
      if (!c) byNamespace.set(ns, (c = { routes: 0, backends: 0, certificates: 0 }));
      return c;
    };
    for (const [ns, n] of routesByNs) of(ns).routes = n;
    for (const [ns, n] of backends.byNamespace) of(ns).backends = n;
    for (const [ns, n] of certs.byNamespace) of(ns).certificates = n;
    return { totals: { routes: routesTotal, backends: backends.total, certificates: certs.total }, byNamespace };
  };
}

const certificateSums = new WeakMap<Configuration['certificates'], { total: number; byNamespace: Map<string, number> }>();

function certificateTotals(certificates: Configuration['certificates']): { total: number; byNamespace: Map<string, number> } {
  let sums = certificateSums.get(certificates);
  if (!sums) {
    sums = { total: 0, byNamespace: new Map() };
    for (const [uid, c] of Object.entries(certificates)) {
      const n = c.pem.length + uid.length + 8;
      sums.total += n;
      sums.byNamespace.set(namespaceOf(c.secret), (sums.byNamespace.get(namespaceOf(c.secret)) ?? 0) + n);
    }
    certificateSums.set(certificates, sums);
  }
  return sums;
}

function describe(c: Charge): string {
  const parts: string[] = [];
  if (c.routes > 0) parts.push(`route entries ${formatBytes(c.routes)}`);
  if (c.backends > 0) parts.push(`backends ${formatBytes(c.backends)}`);
  if (c.certificates > 0) parts.push(`certificates ${formatBytes(c.certificates)}`);
  return parts.join(', ') || 'nothing';
}

/**
 * The Ingresses over the byte budgets of nginx.conf: `bytes` is each Ingress's share of the
 * rendered text (its locations), `order` the served Ingresses oldest first.
 */
export function overConfBudgets(bytes: ReadonlyMap<string, number>, order: readonly string[], budgets: Budgets): OverBudget[] {
  if (budgets.maxBytesPerIngress <= 0 && budgets.maxBytesPerNamespace <= 0) return [];
  const out: OverBudget[] = [];
  const held = new Map<string, number>();
  for (const key of order) {
    const n = bytes.get(key);
    if (n === undefined) continue;
    if (budgets.maxBytesPerIngress > 0 && n > budgets.maxBytesPerIngress) {
      out.push({ key, scope: 'object', reason: `over budget: its locations take ${formatBytes(n)} of nginx.conf, more than one Ingress may (${BUDGET_FLAGS.maxBytesPerIngress}=${budgets.maxBytesPerIngress})` });
      continue;
    }
    const ns = namespaceOf(key);
    const before = held.get(ns) ?? 0;
    if (budgets.maxBytesPerNamespace > 0 && before + n > budgets.maxBytesPerNamespace) {
      out.push({
        key, scope: 'namespace',
        reason: `over budget: namespace ${ns} takes ${formatBytes(before)} of nginx.conf with its older Ingresses and this one adds ${formatBytes(n)}, more than a namespace may (${BUDGET_FLAGS.maxBytesPerNamespace}=${budgets.maxBytesPerNamespace}); the older ones are served`,
      });
      continue;
    }
    held.set(ns, before + n);
  }
  return out;
}
