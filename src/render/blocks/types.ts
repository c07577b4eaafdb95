// The contract of a render block: the NGINX directives of one annotation group, built from the
// group's typed values in the model through the escaping filters (../filters.ts). The location
// and server frames (../location.ts, ../view.ts) place each block's text in a fixed slot order
// (LOCATION_LAYOUT in ./index.ts); the templates in nginx/ lay out nginx.conf and the server block.
import type { NginxSettings } from '../../model/core/config/settings.js';
import type { Location, Server } from '../../model/core/types.js';
import type { NginxRuntime } from '../runtime.js';

/** What a block sees of one location. */
export interface LocationContext {
  readonly server: Server;
  readonly loc: Location;
  readonly settings: NginxSettings;
  readonly runtime: NginxRuntime;
  /** How this location sends headers upstream: `proxy_set_header` or `grpc_set_header` (backend-protocol). */
  readonly hdr: string;
  /**
   * A short stable name for what the location needs outside its block (rate-limit zones, the
   * auth location); the two pieces of a Prefix split share it. Computed on first use.
   */
  id(): string;
}

/**
 * Text a location needs outside its `location` block, printed once under its name (locations
 * that share it ask for it again): made only the first time the name is seen.
 */
export interface Shared {
  readonly name: string;
  text(): string;
}

/**
 * Headers a location sends upstream itself. NGINX inherits the http-level proxy_set_header set
 * only into a location that sets none, so any part (even empty) makes the location print the
 * whole standard set again, with these lines before it and these values in it.
 */
export interface HeaderPart {
  /** Directives that fill variables the lines or values use (printed as they are, before the lines). */
  readonly setup?: string;
  readonly lines?: readonly string[];
  /** The standard set's Host value. */
  readonly host?: string;
  /** The standard set's Connection value. */
  readonly connection?: string;
}

/** The pass directive (without `;`) and the directive that sets upstream headers. */
export interface Upstream {
  readonly pass: string;
  readonly hdr: string;
}

/**
 * What a group asks of the location's Lua rewrite phase (the Lua wiring contract, printed by the
 * location frame): the SSL-redirect settings as words, the backend used while the location's
 * backend has no endpoint, or that a snippet may set $proxy_upstream_name itself.
 */
export interface LuaPart {
  /** A Lua statement run first (opentelemetry: the request's span opens before any redirect). */
  readonly first?: string;
  readonly redirect?: readonly string[];
  readonly fallbackBackend?: string;
  readonly backendFromSnippet?: boolean;
}

/** Features defined once at http level by nginx.conf.liquid that a location may need. */
export type HttpFeature = 'auth_cache' | 'tls_upstream';

/**
 * A group's directives inside a location, one function per slot it prints in. Slots are printed
 * in this order: redirect, lua (the rewrite phase), access, cors, errors, headers, proxy,
 * snippet, then the pass directive. Each returns '' (or null) when the location needs nothing.
 * A RenderError (filters.ts) denies the location (503), naming the field.
 */
export interface LocationBlock {
  /** Why the location must answer 503 instead of being proxied, or null. */
  deny?(c: LocationContext): string | null;
  /** How the location proxies (one block decides: backend-protocol). */
  upstream?(loc: Location, server: Server, settings: NginxSettings): Upstream | null;
  redirect?(c: LocationContext): string;
  lua?(c: LocationContext): LuaPart | null;
  access?(c: LocationContext): string;
  cors?(c: LocationContext): string;
  errors?(c: LocationContext): string;
  headers?(c: LocationContext): HeaderPart | null;
  proxy?(c: LocationContext): string;
  snippet?(c: LocationContext): string;
  /** Internal locations of the server this location uses (auth subrequests, error pages). */
  internal?(c: LocationContext): readonly Shared[];
  /** Directives at http level (rate-limit zones). */
  http?(c: LocationContext): readonly Shared[];
  /** http-level features nginx.conf.liquid defines that the location uses. */
  uses?(c: LocationContext): readonly HttpFeature[];
}

/** What a block sees of one server. */
export interface ServerContext {
  readonly server: Server;
  readonly settings: NginxSettings;
  readonly runtime: NginxRuntime;
  /** The listen directives of the server (for servers printed beside it). */
  readonly listen: readonly string[];
  /** The other name of a from-to-www server when it is not a server itself, else null. */
  readonly wwwRedirectFrom: string | null;
}

/** A group's directives at server level. */
export interface ServerBlock {
  /** Further server names (beside the host). */
  names?(c: ServerContext): readonly string[];
  /** Directives inside the server block; a RenderError leaves them out (reported), not the server. */
  directives?(c: ServerContext): string;
  /** Whether the directives set header_filter_by_lua themselves (NGINX refuses a second one). */
  ownsHeaderFilter?(c: ServerContext): boolean;
  /** Servers printed after this one. */
  after?(c: ServerContext): string;
}

/** A file the configuration names, written beside nginx.conf before NGINX reads it. */
export interface AuxiliaryFile {
  path: string;
  content: string;
  /** File mode; 0644 when absent (0600 for what comes from a Secret's private values). */
  mode?: number;
  /**
   * NGINX's workers read it per request (an htpasswd file), not its master at load: a 0600 file is
   * then given to the workers' user when the controller runs as root (a root master's workers are
   * another user).
   */
  readByWorkers?: true;
  /** How `content` becomes bytes: UTF-8 when absent, `latin1` for binary content (one byte per character). */
  encoding?: 'latin1';
}

/**
 * How a group's setting reaches a request — what decides whether changing it needs a reload:
 * - `directives`: printed in nginx.conf (a change reloads NGINX);
 * - `lua`: carried by the Lua payloads (backends, servers) and applied per request, no reload;
 * - `stream`: the stream block of nginx.conf (a change reloads NGINX).
 */
export type Applied = 'directives' | 'lua' | 'stream';

/** The render side of one annotation group. */
export interface RenderBlock {
  /** The annotation group (src/model/ingress/annotations/<group>.ts, its `name`) whose values it prints. */
  readonly group: string;
  readonly applied: Applied;
  readonly location?: LocationBlock;
  readonly server?: ServerBlock;
  /** Files a location needs written beside nginx.conf (e.g. htpasswd). */
  files?(loc: Location, runtime: NginxRuntime): readonly AuxiliaryFile[];
  /** Files the server block needs written beside nginx.conf (e.g. a client CA bundle). */
  serverFiles?(server: Server, runtime: NginxRuntime): readonly AuxiliaryFile[];
}
