// Backend plans: how each backend (upstream) is to be built, from the Ingresses that use it, as
// ingress-nginx assigns a backend's settings when several Ingresses share a Service. The first
// (oldest) Ingress using a backend gives it load balancing, hashing and service-upstream. Cookie
// affinity is the paths': the backend is sticky when any Ingress using it sets affinity
// "cookie", the cookie is set only on those Ingresses' hosts and paths, and affinity-mode is the
// first one set. Its session-cookie-* settings are the oldest such Ingress's (ingress-nginx takes
// the newest's: docs/differences.md, "Oldest wins, consistently"). An Ingress whose settings the
// shared backend does not take is told so (a warning naming the one whose it takes).
// A plan is filled while the topology is made and never changes once the topology is returned.
import { NO_AFFINITY, sessionAffinity } from './backends.js';
import { affinityGroup } from './annotations/affinity.js';
import type { ParsedAnnotations } from './annotations/index.js';
import { loadBalanceGroup } from './annotations/loadbalance.js';
import { serviceUpstreamGroup } from './annotations/serviceupstream.js';
import { upstreamHashGroup } from './annotations/upstreamhash.js';
import { DEFAULT_UPSTREAM, type BackendUse, type IngressFragment } from './fragments.js';
import { ROOT_PATH } from '../core/paths.js';
import { ownedBy } from './takeovers.js';
import type { ModelWarning, Server, SessionAffinityConfig } from '../core/types.js';

/** The annotation keys (without prefix) of the settings a shared backend takes from one of its Ingresses. */
export const SHARED_BACKEND_KEYS: readonly string[] = [affinityGroup, loadBalanceGroup, upstreamHashGroup, serviceUpstreamGroup].flatMap((g) => Object.keys(g.keys));

/** How one backend is built, from the Ingresses that use it (first one wins its policies). */
export interface BackendPlan {
  readonly name: string;
  readonly use: BackendUse;
  readonly ownerKey: string;
  readonly owner: ParsedAnnotations;
  /** Only canary Ingresses use it. */
  readonly canary: boolean;
  readonly serviceUpstream: boolean;
  /** The Ingresses using it, oldest first, each once (the owner first). */
  readonly users: readonly IngressFragment[];
  /** Cookie-affinity locations, host → paths of the Ingresses with affinity "cookie" (collected while planning). */
  readonly locations: ReadonlyMap<string, readonly string[]> | null;
  /** The oldest Ingress using it with affinity "cookie": its session cookie is the backend's. */
  readonly cookieFrom: IngressFragment | null;
  /** The first Ingress using it that sets affinity-mode. */
  readonly modeFrom: IngressFragment | null;
  // Set when the topology is final:
  readonly affinity: SessionAffinityConfig;
  /** Stands for `affinity` in memo comparisons. */
  readonly affinityKey: string;
  readonly alternatives: readonly string[];
  readonly alternativesKey: string;
  readonly sslPassthrough: boolean;
  /** Key of the endpoints memo. */
  readonly endpointsKey: string;
  /** Users whose backend settings this backend does not take, each told which Ingress's it takes. */
  readonly warnings: readonly ModelWarning[];
}

/** A plan while the topology is being made. */
export type PlanDraft = { -readonly [K in Exclude<keyof BackendPlan, 'locations' | 'alternatives' | 'users'>]: BackendPlan[K] } & {
  users: IngressFragment[];
  locations: Map<string, string[]> | null;
  alternatives: string[];
};

export function endpointsKey(svcKey: string, port: string, serviceUpstream: boolean): string {
  return `${svcKey}|${port}|${serviceUpstream ? 1 : 0}`;
}

export function newPlan(use: BackendUse, f: IngressFragment): PlanDraft {
  return {
    name: use.name, use, ownerKey: f.key, owner: f.parsed, canary: f.canary, serviceUpstream: f.parsed.serviceUpstream,
    users: [], locations: null, cookieFrom: null, modeFrom: null, affinity: NO_AFFINITY, affinityKey: '', alternatives: [], alternativesKey: '',
    sslPassthrough: false, endpointsKey: endpointsKey(use.serviceKey, use.port, f.parsed.serviceUpstream), warnings: [],
  };
}

/** The plan of a use (made by `f` if it is the first user, and `f` among its users); null when `only` leaves it out. */
function plan(plans: Map<string, PlanDraft>, f: IngressFragment, use: BackendUse, only?: ReadonlySet<string>): PlanDraft | null {
  if (only && !only.has(use.name)) return null;
  let p = plans.get(use.name);
  if (!p) plans.set(use.name, (p = newPlan(use, f)));
  if (p.users[p.users.length - 1] !== f) p.users.push(f);
  return p;
}

/** Adds a non-canary fragment's uses to the plans (the first user owns a plan; see the head of this file for affinity). */
export function planUses(plans: Map<string, PlanDraft>, f: IngressFragment, only?: ReadonlySet<string>, owners?: ReadonlyMap<string, string> | null): void {
  if (f.defaultBackend) plan(plans, f, f.defaultBackend, only);
  const { affinity } = f.parsed;
  for (const e of f.paths) {
    if (owners && !ownedBy(owners, e.host, f)) continue;
    const p = plan(plans, f, e.use, only);
    if (!p) continue;
    if (affinity.mode !== '' && !p.modeFrom) p.modeFrom = f;
    if (affinity.type === 'cookie') {
      p.cookieFrom ??= f;
      p.locations ??= new Map();
      const list = p.locations.get(e.host);
      if (list) list.push(e.location.path);
      else p.locations.set(e.host, [e.location.path]);
    }
  }
}

/** Sets what a plan can know only once every user is known: ssl-passthrough, alternatives, cookie affinity, warnings. */
export function finishPlan(p: PlanDraft, aliasesOf: (host: string) => readonly string[], passthrough: ReadonlySet<string>): void {
  p.sslPassthrough = passthrough.has(p.name);
  p.alternativesKey = p.alternatives.join(',');
  if (p.canary) return;
  p.warnings = sharedBackendWarnings(p);
  if (p.sslPassthrough) p.warnings = [...p.warnings, ...passthroughBackendWarnings(p)];
  if (!p.cookieFrom || !p.locations) return;
  const locations: Record<string, string[]> = {};
  for (const [h, paths] of p.locations) {
    locations[h] = paths;
    for (const a of aliasesOf(h)) locations[a] = [...(locations[a] ?? []), ...paths];
  }
  p.affinity = sessionAffinity(p.cookieFrom.parsed, p.modeFrom?.parsed.affinity.mode ?? '', locations);
  p.affinityKey = JSON.stringify(p.affinity);
}

/**
 * Whether a finished draft says what an earlier plan says (the same fragments, owner, users and
 * everything finishPlan set), so the earlier plan object can stand for it and the backend made
 * from it be reused. `locations` only feeds `affinity`, which `affinityKey` stands for.
 */
export function samePlan(a: BackendPlan, b: BackendPlan): boolean {
  return a.name === b.name && a.use === b.use && a.ownerKey === b.ownerKey && a.owner === b.owner && a.canary === b.canary
    && a.serviceUpstream === b.serviceUpstream && a.cookieFrom === b.cookieFrom && a.modeFrom === b.modeFrom
    && a.affinityKey === b.affinityKey && a.alternativesKey === b.alternativesKey && a.sslPassthrough === b.sslPassthrough
    && a.endpointsKey === b.endpointsKey && sameItems(a.users, b.users) && sameWarnings(a.warnings, b.warnings);
}

const sameItems = <T>(a: readonly T[], b: readonly T[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
const sameWarnings = (a: readonly ModelWarning[], b: readonly ModelWarning[]): boolean =>
  a.length === b.length && a.every((w, i) => w.object === b[i]!.object && w.field === b[i]!.field && w.message === b[i]!.message);

/** How a plain-HTTP use of an ssl-passthrough host's backend is told (a deliberate difference: the webhook's table warns). */
export const PASSTHROUGH_BACKEND_WARNING = 'is the backend of an ssl-passthrough host, which speaks TLS to it';

/**
 * Users without ssl-passthrough that proxy plain HTTP to an ssl-passthrough host's backend:
 * ingress-nginx switches their proxy_pass to https:// for it; ingress-rx keeps what their
 * backend-protocol says, so each is told.
 */
function passthroughBackendWarnings(p: PlanDraft): ModelWarning[] {
  return p.users.filter((u) => !u.parsed.sslPassthrough && (u.parsed.backendProtocol === 'HTTP' || u.parsed.backendProtocol === 'AUTO_HTTP')).map((u) => ({
    object: `Ingress ${u.key}`, field: 'metadata.annotations',
    message: `backend ${p.name} ${PASSTHROUGH_BACKEND_WARNING}: this Ingress proxies plain HTTP to it (backend-protocol ${u.parsed.backendProtocol}), which a TLS-only backend refuses (502); ingress-nginx would switch to HTTPS, ingress-rx does not: set backend-protocol HTTPS`,
  }));
}

/**
 * One warning per user of a shared backend whose backend settings are not the ones it takes: the
 * owner's (load-balance, upstream-hash-by-*, service-upstream), the first affinity-mode and
 * cookie; and on an Ingress without affinity, that the backend is sticky.
 */
function sharedBackendWarnings(p: PlanDraft): ModelWarning[] {
  if (p.users.length < 2) return [];
  const out: ModelWarning[] = [];
  const warn = (u: IngressFragment, message: string) => out.push({ object: `Ingress ${u.key}`, field: 'metadata.annotations', message: `backend ${p.name} is shared ${message}` });
  const owner = p.users[0]!;
  const hashOf = (a: ParsedAnnotations) => (a.upstreamHashBy.hashBy === '' ? '' : JSON.stringify(a.upstreamHashBy));
  for (const u of p.users) {
    if (u === owner) continue;
    const a = u.parsed;
    const keys: string[] = [];
    if (a.loadBalance !== owner.parsed.loadBalance) keys.push('load-balance');
    if (hashOf(a) !== '' && hashOf(a) !== hashOf(owner.parsed)) keys.push('upstream-hash-by');
    if (a.serviceUpstream !== owner.parsed.serviceUpstream) keys.push('service-upstream');
    if (keys.length > 0) warn(u, `with Ingress ${owner.key}, the oldest Ingress using it: its ${keys.join(', ')} are that Ingress's, not this one's`);
  }
  const { cookieFrom, modeFrom } = p;
  if (!cookieFrom) return out;
  const cookie = JSON.stringify(cookieFrom.parsed.affinity.cookie);
  for (const u of p.users) {
    const a = u.parsed.affinity;
    if (a.type !== 'cookie') {
      warn(u, `with Ingress ${cookieFrom.key}, which sets affinity "cookie": on this Ingress's paths a request keeps the endpoint its cookie names, and no cookie is set`);
      continue;
    }
    if (u !== cookieFrom && JSON.stringify(a.cookie) !== cookie) {
      warn(u, `with Ingress ${cookieFrom.key}, the oldest Ingress using it with affinity "cookie": its session cookie (session-cookie-*) is that Ingress's, not this one's`);
    }
    if (modeFrom && u !== modeFrom && a.mode !== '' && a.mode !== modeFrom.parsed.affinity.mode) {
      warn(u, `with Ingress ${modeFrom.key}, the oldest Ingress using it that sets affinity-mode: its affinity-mode is that Ingress's, not this one's`);
    }
  }
  return out;
}

/** The backends of ssl-passthrough hosts (their `/` location's). */
export function passthroughBackends(servers: Iterable<Server>): Set<string> {
  const out = new Set<string>();
  for (const server of servers) {
    if (!server.sslPassthrough) continue;
    const r = server.locations.find((l) => l.path === ROOT_PATH && l.pathType !== 'Exact');
    if (r && r.backend !== DEFAULT_UPSTREAM) out.add(r.backend);
  }
  return out;
}
