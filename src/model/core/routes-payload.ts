// The route table the Lua router serves dynamic hosts from (/configuration/routes): per host,
// its locations as NGINX would match them (./paths.ts locationMatch, in locationOrder) and what
// the static location block would set per request — the variables logs and metrics read, the
// backend and its default-backend fallback, the SSL-redirect flags — or that it answers 503.
import type { NginxSettings } from './config/settings.js';
import { locationMatch, locationOrder } from './paths.js';
import { locationLabel } from './origin.js';
import { routeAccess, routeResponse, routeTrace, routeUpstream, type RouteAccess, type RouteResponse, type RouteTrace, type RouteUpstream } from './route-settings.js';
import { connectionRouteFields, redirectRouteFields, rewriteRouteFields, upstreamVhostRouteFields, type RouteUriFields } from './route-uri.js';
import type { Configuration, Location, RouteConditions, RouteFilters, RouteRetry, Server, WeightedBackend } from './types.js';

export interface RouteEntry extends RouteUpstream, RouteAccess, RouteResponse, RouteTrace, RouteUriFields {
  /** How NGINX matches it: `=` (exact), a prefix, or a regular expression (`~`, `~*` when caseless). */
  readonly match: 'exact' | 'prefix' | 'regex';
  /** The path (exact, prefix) or the pattern (regex). */
  readonly pattern: string;
  readonly caseless: boolean;
  /** The location answers 503 (an invalid annotation, a missing backend), or deniedStatus: nothing below applies. */
  readonly denied: boolean;
  /** The status a denied entry answers when not 503 (Location.deniedStatus). */
  readonly deniedStatus?: 500;
  readonly namespace: string;
  readonly ingress: string;
  readonly service: string;
  readonly port: string;
  /** $location_path: the Ingress rule's path. */
  readonly path: string;
  /** $proxy_upstream_name. */
  readonly backend: string;
  /** default-backend: where the request goes while the backend has no endpoint ('' = none). */
  readonly fallback: string;
  /** lua_ingress.rewrite's flags ('' = no SSL redirect). */
  readonly redirect: string;
  /** Header, query and method conditions (lua/route_match.lua); absent: none. */
  readonly when?: RouteConditions;
  /** HTTPRoute filters (lua/route_filters.lua) but CORS (the entry's `cors`); absent: none. */
  readonly filters?: Omit<RouteFilters, 'cors'>;
  /** Weighted backends drawn per request in place of `backend` (lua/router.lua); absent: none. */
  readonly split?: readonly WeightedBackend[];
  /** Retries (lua/route_upstream.lua): the codes retried and how many times; absent: none. */
  readonly retry?: RouteRetry;
  /** `h2c`: the router's location that speaks HTTP/2 cleartext upstream; absent: HTTP/1.1. */
  readonly protocol?: 'h2c';
  /** The id of the router's TLS location the backend is reached through (BackendTLSPolicy); absent: none. */
  readonly tls?: string;
}

export interface RoutesPayload {
  /** Host name (lower case; `*.x` covers one label) → its locations in the order NGINX tries them. */
  readonly hosts: Readonly<Record<string, readonly RouteEntry[]>>;
  /** The `*.x` hosts whose wildcard covers several labels (Gateway API); absent when there are none. */
  readonly several?: readonly string[];
}

const memo = new WeakMap<Server, { readonly settings: NginxSettings; readonly entries: readonly RouteEntry[] }>();

/** An HTTPRoute's filters: its CORS goes where an Ingress's goes (lua/route_cors.lua), the others to lua/route_filters.lua. */
function routeFilters(loc: Location): Pick<RouteEntry, 'filters' | 'cors'> {
  if (!loc.filters) return {};
  const { cors, ...rest } = loc.filters;
  return { ...(Object.keys(rest).length > 0 ? { filters: rest } : {}), ...(cors ? { cors } : {}) };
}

function redirectFlags(loc: Location): string {
  const rw = loc.settings.rewrite;
  const flags: string[] = [];
  if (rw.forceSSLRedirect) flags.push('force-ssl-redirect');
  if (rw.sslRedirect) flags.push('ssl-redirect');
  if (flags.length > 0 && rw.preserveTrailingSlash) flags.push('preserve-trailing-slash');
  if (flags.length > 0 && rw.usePortInRedirects) flags.push('use-port-in-redirects');
  return flags.join(' ');
}

/** The URI and redirect settings of a location that is not denied (./route-uri.ts). */
function uriFields(server: Server, loc: Location): RouteUriFields | null {
  const redirect = redirectRouteFields(server, loc);
  const rewrite = rewriteRouteFields(server, loc);
  if (redirect === null || rewrite === null) return null;
  return { ...redirect, ...rewrite, ...upstreamVhostRouteFields(server, loc), ...connectionRouteFields(loc) };
}

/** One server's entries, each distinct match once (the first, as the renderer keeps it). */
export function hostRoutes(server: Server, settings: NginxSettings): readonly RouteEntry[] {
  const known = memo.get(server);
  if (known && known.settings === settings) return known.entries;
  const seen = new Set<string>();
  const entries: RouteEntry[] = [];
  for (const loc of locationOrder(server)) {
    const m = locationMatch(loc, server.useRegex);
    const pattern = m.kind === 'regex' ? m.regex : m.path;
    // Locations with conditions share a match: the router tries them in this order.
    const key = `${m.kind === 'regex' ? (m.caseless ? '~*' : '~') : m.kind} ${pattern}${loc.when ? ` ${JSON.stringify(loc.when)}` : ''}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const uri = loc.denied === null ? uriFields(server, loc) : null;
    entries.push({
      match: m.kind,
      pattern,
      caseless: m.kind === 'regex' && m.caseless,
      denied: uri === null,
      ...(uri === null && loc.deniedStatus ? { deniedStatus: loc.deniedStatus } : {}),
      namespace: loc.ingress?.namespace ?? '',
      ingress: loc.ingress ? locationLabel(loc.ingress) : '',
      service: loc.service?.name ?? '',
      port: loc.service?.port ?? '',
      path: loc.ingress ? loc.ingressPath ?? loc.path : '',
      backend: loc.backend,
      fallback: loc.settings.defaultBackend ?? '',
      redirect: redirectFlags(loc),
      ...(loc.when ? { when: loc.when } : {}),
      ...routeFilters(loc),
      ...(loc.split ? { split: loc.split } : {}),
      ...routeTrace(loc, settings),
      ...(loc.retry ? { retry: loc.retry } : {}),
      ...(loc.upstreamProtocol ? { protocol: loc.upstreamProtocol } : {}),
      ...(loc.backendTLS ? { tls: loc.backendTLS } : {}),
      ...(uri === null ? {} : { ...routeUpstream(loc.settings.proxy, settings), ...routeAccess(loc), ...routeResponse(loc), ...uri }),
    });
  }
  memo.set(server, { settings, entries });
  return entries;
}

const payloads = new WeakMap<Configuration, RoutesPayload>();

/** The dynamic hosts of the model (those the rule let through), sorted by name; once per configuration (the budgets read it before the sync posts it). */
export function routesPayload(config: Configuration): RoutesPayload {
  let payload = payloads.get(config);
  if (payload) return payload;
  const hosts: Record<string, readonly RouteEntry[]> = {};
  const several: string[] = [];
  if (config.dynamicRoutes) {
    for (const s of config.servers) {
      if (s.staticBecause !== null) continue;
      const name = s.hostname.toLowerCase();
      hosts[name] = hostRoutes(s, config.settings);
      if (s.wildcardCoversLabels === 'several') several.push(name);
    }
  }
  payload = several.length > 0 ? { hosts, several } : { hosts };
  payloads.set(config, payload);
  return payload;
}

/** A host's route entries as JSON (JSON.stringify's text exactly) and the bytes of each Ingress's entries in it. */
export interface HostRoutesText {
  readonly text: string;
  /** `namespace/name` → bytes of its entries (the default backend's root entries belong to none). */
  readonly byIngress: ReadonlyMap<string, number>;
  /** The same by namespace. */
  readonly byNamespace: ReadonlyMap<string, number>;
}

const hostTexts = new WeakMap<readonly RouteEntry[], HostRoutesText>();

/** Memoised per entries array (the model hands back unchanged hosts' entries as the same array). */
export function hostRoutesText(entries: readonly RouteEntry[]): HostRoutesText {
  let t = hostTexts.get(entries);
  if (!t) {
    const parts = new Array<string>(entries.length);
    const byIngress = new Map<string, number>();
    const byNamespace = new Map<string, number>();
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      const json = JSON.stringify(e);
      parts[i] = json;
      if (e.ingress !== '') {
        const k = `${e.namespace}/${e.ingress}`;
        byIngress.set(k, (byIngress.get(k) ?? 0) + json.length + 1);
        byNamespace.set(e.namespace, (byNamespace.get(e.namespace) ?? 0) + json.length + 1);
      }
    }
    t = { text: `[${parts.join(',')}]`, byIngress, byNamespace };
    hostTexts.set(entries, t);
  }
  return t;
}

/** One POST of the route table: its body as chunks, and what its answer means for the next. */
export interface RouteTablePost {
  readonly body: readonly string[];
  /** Only the hosts that changed since the table NGINX accepted last (`base`), and those gone. */
  readonly delta: boolean;
  /** NGINX answered 201: the next POST may be a change to this table. */
  accepted(): void;
}

export interface RouteTableSerialiser {
  post(payload: RoutesPayload): RouteTablePost;
  /** What NGINX holds is unknown (a POST failed or was refused): the next POST is the whole table. */
  forget(): void;
}

/** Names of the tables one process posts: unique across restarts of the controller and of NGINX. */
export function routeTableIds(): () => string {
  const prefix = `${process.pid.toString(36)}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  let n = 0;
  return () => `${prefix}-${++n}`;
}

/**
 * The dynamic-config actor's serialiser of route tables (docs/dynamic-routes.md, "The route
 * table"): JSON.stringify's text exactly, each host's entries serialised once while the model
 * hands them back unchanged (hostRoutes keeps them per server, hostRoutesText their text). The
 * whole table while it cannot be sure what NGINX holds (its first POST, after a failed or refused
 * one); after that, a change to the table NGINX accepted last (named by `base`): the hosts whose
 * entries changed and the names of those gone, so a sync that adds one host out of thousands
 * sends, and NGINX checks and compiles, one.
 */
export function createRoutesSerialiser(nextId: () => string = routeTableIds()): RouteTableSerialiser {
  let held: { id: string; texts: ReadonlyMap<string, string> } | null = null;
  return {
    post(payload) {
      const id = nextId();
      const base = held;
      const texts = new Map<string, string>();
      const chunks: string[] = [base ? `{"base":${JSON.stringify(base.id)},"id":${JSON.stringify(id)},"hosts":{` : `{"id":${JSON.stringify(id)},"hosts":{`];
      let first = true;
      for (const [host, entries] of Object.entries(payload.hosts)) {
        const text = hostRoutesText(entries).text;
        texts.set(host, text);
        if (base && base.texts.get(host) === text) continue;
        chunks.push(`${first ? '' : ','}${JSON.stringify(host)}:`, text);
        first = false;
      }
      if (base) {
        const deleted: string[] = [];
        for (const host of base.texts.keys()) if (!texts.has(host)) deleted.push(host);
        chunks.push(`},"deleted":${JSON.stringify(deleted)}`);
      } else {
        chunks.push('}');
      }
      // Every POST names them all (the list is short): NGINX keeps the last one.
      chunks.push(payload.several ? `,"several":${JSON.stringify(payload.several)}}` : '}');
      return { body: chunks, delta: base !== null, accepted: () => { held = { id, texts }; } };
    },
    forget() { held = null; },
  };
}
