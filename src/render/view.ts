// The server view: one server of the model as the parts nginx/server.liquid lays out. Its
// names, listen lines, Lua header filter and guards are the same for every server; the rest is
// composed from the render blocks (src/render/blocks) in the fixed order of SERVER_LAYOUT, and
// each location from the location frame (./location.ts). Everything printed went through a
// filter. A value the renderer cannot express denies its location (503), not the server.
import type { NginxSettings } from '../model/core/config/settings.js';
import type { IngressRef, Location, Server } from '../model/core/types.js';
import { locationMatch, locationOrder } from '../model/core/paths.js';
import type { NginxRuntime } from './runtime.js';
import * as f from './filters.js';
import { RenderError, listenAddress } from './filters.js';
import { SERVER_LAYOUT, slotFunctions } from './blocks/index.js';
import { spoofedClientGuard } from './settings-directives.js';
import type { HttpFeature, ServerBlock, ServerContext as BlockServerContext } from './blocks/types.js';
import { deniedText, renderLocation, repeatedPieces, type LocationFrame } from './location.js';
import { DEFAULT_ROOT_LOCATION, DYNAMIC_ROUTE_HOOK, dynamicRouteLocation, dynamicRouteRootLocation, routerPlacement, routerVariantLocations } from './dynamic-routes.js';

export interface ServerView {
  /** The host and its aliases (the `## start server` marker). */
  names: string;
  /** What server_name lists: `names`, with a wildcard host as a one-label regex. */
  serverName: string;
  /**
   * The parts of the server block as dense strings: liquidjs costs microseconds per output
   * node, which at 10k servers is most of a full render, so server.liquid prints a few of them.
   */
  listenText: string;
  /**
   * header_filter_by_lua, once per server: every location that defines none inherits it. Left
   * out when a block's directives set their own (NGINX refuses duplicates).
   */
  luaPhases: string;
  /** The block-cidrs, block-user-agents and block-referers guards. */
  guards: string;
  /** The blocks' server-level directives (server-snippet). */
  directives: string;
  /** The location blocks, laid out. */
  locationsText: string;
  /** Internal locations (external auth, custom errors). */
  extra: string;
  /** Servers printed after this one (the from-to-www redirect server). */
  after: string;
  /** Directives this server needs at http level (rate-limit zones). */
  httpLevel: string;
  /** http-level features of nginx.conf.liquid its locations use (the auth cache). */
  uses: readonly HttpFeature[];
  /** Values the renderer refused: each denied or left out its location, or left out server directives. */
  problems: RenderProblem[];
  /** Each Ingress's bytes of the text: its locations and what they made first (the budgets read it). */
  ingressBytes: ReadonlyMap<IngressRef, number>;
}

/**
 * A value the renderer could not express, and what became of it: the location answers 503 or is
 * left out, or the server's directives or the whole server are left out. It names the Ingresses
 * concerned.
 */
export interface RenderProblem {
  ingresses: IngressRef[];
  host: string;
  path?: string;
  /** The field (annotation, `path`, …) the renderer refused. */
  field: string;
  message: string;
  outcome: 'location denied (503)' | 'location left out' | 'server left out' | `${string} left out`;
}

export interface ServerContext {
  settings: NginxSettings;
  runtime: NginxRuntime;
  /** The host to redirect to when this server has from-to-www and the other name is not a server. */
  wwwRedirectFrom: string | null;
  /** ssl-passthrough is in effect: HTTPS arrives from the SNI stream server on 127.0.0.1:proxyPort. */
  passthroughPort?: number;
  /** --enable-dynamic-routes: the default and wildcard servers hand dynamic hosts to the Lua router. */
  dynamicRoutes?: boolean;
}

const serverSlots = <S extends keyof ServerBlock>(slot: S) => slotFunctions<ServerBlock, S>(SERVER_LAYOUT, 'server', slot);
const NAMES = serverSlots('names');
const DIRECTIVES = serverSlots('directives');
const OWNS_HEADER_FILTER = serverSlots('ownsHeaderFilter');
const AFTER = serverSlots('after');

/** The location's match, as the model says NGINX matches it (one per model location: the model made the Prefix split's twins). */
function matcher(server: Server, loc: Location): string {
  const field = 'path';
  const m = locationMatch(loc, server.useRegex);
  if (m.kind === 'exact') return `= ${f.path(m.path, field)}`;
  if (m.kind === 'prefix') return f.path(m.path, field);
  return `${m.caseless ? '~*' : '~'} ${f.regex(m.regex, field)}`;
}

/**
 * The request's $host as a Lua literal when the server block has one exact name (so $host is
 * that name), else '': the Lua then reads the variable. `host` is the hostname through f.host.
 */
function knownHost(server: Server, host: string): string {
  return server.hostname === '_' || server.hostname.startsWith('*') || server.aliases.length > 0 ? '' : f.luaString(host, 'host');
}

/**
 * A wildcard host (`*.foo.com`, already through the host filter) as a server_name regex that
 * covers exactly one DNS label, as the Ingress spec says and ingress-nginx renders it (NGINX's
 * own `*.foo.com` would also match `a.b.foo.com`). `$subdomain` holds the label.
 */
function wildcardServerName(host: string): string {
  return `"~^(?<subdomain>[\\w-]+)${host.slice(1).replace(/\./g, '\\.')}$"`;
}

/** Builds the view of one server; errors name the server and the location. */
export function serverView(server: Server, ctx: ServerContext): ServerView {
  const s = ctx.settings;
  const isDefault = server.hostname === '_';
  const { listen, listenText } = listenLines(ctx, isDefault);
  const bctx: BlockServerContext = { server, settings: s, runtime: ctx.runtime, listen, wwwRedirectFrom: ctx.wwwRedirectFrom };
  const hostName = f.host(server.hostname, 'host');
  let names = hostName;
  let serverName = names.startsWith('*.') ? wildcardServerName(names) : names;
  for (const fn of NAMES) {
    for (const name of fn(bctx)) {
      names += ` ${name}`;
      serverName += ` ${name}`;
    }
  }
  const problems: RenderProblem[] = [];
  const host = knownHost(server, hostName);
  const frame: LocationFrame = { settings: s, runtime: ctx.runtime, host, repeated: repeatedPieces() };
  const seenMatchers = new Set<string>();
  // Made when first needed: most servers share nothing and use no http-level feature.
  let seenShared: Set<string> | null = null;
  let uses: Set<HttpFeature> | null = null;
  let locationsText = '';
  let extra = '';
  let httpLevel = '';
  const ingressBytes = new Map<IngressRef, number>();
  const ordered = locationOrder(server);
  const router = routerPlacement(server, ctx.dynamicRoutes === true, ordered);
  for (const loc of ordered) {
    let m: string;
    try {
      m = router === 'root' ? DEFAULT_ROOT_LOCATION : matcher(server, loc);
    } catch (err) {
      problems.push(problemOf(server, loc, err, 'location left out'));
      continue;
    }
    if (seenMatchers.has(m)) continue;
    seenMatchers.add(m);
    try {
      const r = renderLocation(server, loc, m, frame);
      let own = '';
      let http = '';
      if (r.internal.length + r.http.length > 0) {
        // What the location shares with others is made once, the first time its name is seen;
        // names are marked seen only once all of them were made (a RenderError denies the location).
        const made: string[] = [];
        const seen = (seenShared ??= new Set());
        for (const x of r.internal) if (!seen.has(x.name) && !made.includes(x.name)) { own += x.text(); made.push(x.name); }
        for (const x of r.http) if (!seen.has(x.name) && !made.includes(x.name)) { http += x.text(); made.push(x.name); }
        for (const name of made) seen.add(name);
      }
      locationsText += r.text;
      extra += own;
      httpLevel += http;
      if (loc.ingress) ingressBytes.set(loc.ingress, (ingressBytes.get(loc.ingress) ?? 0) + r.text.length + own.length + http.length);
      if (r.uses.length > 0) for (const u of r.uses) (uses ??= new Set()).add(u);
    } catch (err) {
      // One value the renderer cannot express denies its location (503), not the server.
      const problem = problemOf(server, loc, err, 'location denied (503)');
      problems.push(problem);
      locationsText += deniedText(m, f.comment(`${problem.field}: ${problem.message}`));
    }
  }
  let directives = '';
  for (const fn of DIRECTIVES) {
    try {
      directives += fn(bctx);
    } catch (err) {
      // The server keeps its locations; the directives the renderer refused are left out.
      const { field, message } = describe(err, 'server');
      problems.push({ ingresses: [], host: server.hostname, field, message, outcome: `${field} left out` });
    }
  }
  let after = '';
  for (const fn of AFTER) after += fn(bctx);
  if (router === 'root') locationsText += dynamicRouteRootLocation(s, ctx.runtime);
  if (router === 'hook') extra += dynamicRouteLocation(s, ctx.runtime);
  if (router !== 'none') extra += routerVariantLocations(s, ctx.runtime);
  const guards = (s.blockCidrs.length > 0 ? '        if ($block_cidr) {\n            return 403;\n        }\n' : '')
    + (s.blockUserAgents.length > 0 ? '        if ($block_ua) {\n            return 403;\n        }\n' : '')
    + (s.blockReferers.length > 0 ? '        if ($block_ref) {\n            return 403;\n        }\n' : '')
    + spoofedClientGuard(s)
    + (router === 'hook' ? DYNAMIC_ROUTE_HOOK : '')
    + (needsHostGuard(server, ordered) ? HOST_GUARD : '');
  return {
    names, serverName, listenText,
    luaPhases: OWNS_HEADER_FILTER.some((fn) => fn(bctx)) ? '' : serverLua(host),
    guards, directives, locationsText, extra, after, httpLevel, uses: uses === null ? NO_USES : [...uses], problems, ingressBytes,
  };
}

/**
 * A server whose names do not bound $host (the default server, NGINX's own `*.` wildcards of
 * server-alias) lets a request's Host through as it came (`evil.test#.a.test` matches `*.a.test`),
 * and NGINX names $host in every absolute redirect it builds (a path's trailing slash, a relative
 * Location): such a server answers a host that is no DNS name or IP literal with 400, before any
 * location. Dynamic hosts were moved to the router before it (their host is a route's); a default
 * server with no Ingress location redirects nothing.
 */
function needsHostGuard(server: Server, ordered: readonly Location[]): boolean {
  if (server.hostname === '_') return ordered.some((l) => l.ingress !== null);
  return server.aliases.some((a) => a.startsWith('*'));
}

const NO_USES: readonly HttpFeature[] = Object.freeze([]);

const HOST_GUARD = '        if ($host !~ "^([a-z0-9_.-]+|\\[[0-9a-f:.]+\\])$") {\n            return 400;\n        }\n';

// No log_by_lua: the EWMA learns in the header filter (see lua/balancer.lua).
const serverLua = (host: string) => `        header_filter_by_lua_block {\n            balancer.header_filter()\n            lua_ingress.header(${host})\n        }\n`;

function describe(err: unknown, fallbackField: string): { field: string; message: string } {
  if (err instanceof RenderError) return { field: err.field, message: err.message.slice(err.field.length + 2) };
  return { field: fallbackField, message: String((err as Error)?.message ?? err) };
}

function problemOf(server: Server, loc: Location, err: unknown, outcome: RenderProblem['outcome']): RenderProblem {
  const { field, message } = describe(err, 'location');
  return { ingresses: loc.ingress ? [loc.ingress] : [], host: server.hostname, path: loc.path, field, message, outcome };
}

interface Listen {
  settings: NginxSettings;
  runtime: NginxRuntime;
  passthroughPort: number | undefined;
  listen: string[];
  listenText: string;
}

/** The last listen directives made, for the default server and for the others: the same for every server of a render. */
const listenMemo: Array<Listen | undefined> = [undefined, undefined];

function listenLines(ctx: ServerContext, isDefault: boolean): Listen {
  const { settings: s, runtime: rt, passthroughPort } = ctx;
  const known = listenMemo[isDefault ? 1 : 0];
  if (known && known.settings === s && known.runtime === rt && known.passthroughPort === passthroughPort) return known;
  const listen: string[] = [];
  const flags = `${isDefault ? ' default_server' : ''}${isDefault && s.reusePort ? ' reuseport' : ''}${s.useProxyProtocol ? ' proxy_protocol' : ''}`;
  const ssl = ` ssl${s.useHttp2 ? ' http2' : ''}`;
  for (const a of rt.listenAddresses.map(listenAddress)) {
    listen.push(`${a}:${f.num(rt.httpPort)}${flags}`);
    if (passthroughPort === undefined) listen.push(`${a}:${f.num(rt.httpsPort)}${flags}${ssl}`);
  }
  // The SNI stream server always sends the PROXY protocol, so the client address is kept.
  if (passthroughPort !== undefined) listen.push(`127.0.0.1:${f.num(passthroughPort, 'ssl-passthrough-proxy-port')}${flags.replace(' proxy_protocol', '')} proxy_protocol${ssl}`);
  const made = { settings: s, runtime: rt, passthroughPort, listen, listenText: listen.map((l) => `        listen ${l};\n`).join('') };
  listenMemo[isDefault ? 1 : 0] = made;
  return made;
}

export function prefixError(err: unknown, where: string): Error {
  if (err instanceof RenderError) return new RenderError(`${where}: ${err.field}`, err.message.slice(err.field.length + 2));
  return new Error(`${where}: ${(err as Error).message ?? String(err)}`);
}
