// The route-table fields of the URI and redirect settings (docs/dynamic-routes.md): what a
// static location's `return`, app-root `if`, `rewrite … break` and Host / Connection /
// X-Forwarded-Prefix headers do, as data lua/route_redirect.lua, route_rewrite.lua and
// route_upstream_headers.lua apply per request. One function per annotation group; each gives
// only the fields its settings use, so a plain route stays small, or null where the location's
// directives would refuse the value (the location answers 503).
import { checkRegex, escapeRegex } from '../checks/pcre.js';
import { REDIRECT_HOST_VARIABLES, redirectParts, redirectTargetProblem } from '../checks/redirect-url.js';
import type { Location, Server } from './types.js';

/** The redirect a static location answers with `return code url` (permanent/temporal-redirect). */
export interface RouteReturn {
  readonly code: number;
  /** The URL as NGINX evaluates it: literals at even indexes, variable names at odd ones. */
  readonly parts: readonly string[];
  /** absolute_redirect of the location: a URL starting with `/` gets the scheme, host (and port). */
  readonly absolute: boolean;
  /** port_in_redirect of the location. */
  readonly port: boolean;
}

/** The location's `rewrite <regex> <target> break`. */
export interface RouteRewrite {
  readonly regex: string;
  readonly target: string;
}

export interface RouteUriFields {
  return?: RouteReturn;
  /** app-root: `/` is answered 302 to this path on the request's host. */
  appRoot?: string;
  rewrite?: RouteRewrite;
  /** X-Forwarded-Prefix sent upstream. */
  xForwardedPrefix?: string;
  /** The Host header sent upstream (upstream-vhost): literals and variables, as a redirect's parts. */
  upstreamVhost?: readonly string[];
  /** The Connection header sent upstream (connection-proxy-header). */
  connection?: string;
}

/** The regex of a location's `rewrite` (the location's and the router's): its path, caseless. */
export function rewriteRegex(useRegex: boolean, path: string): string {
  return useRegex ? `(?i)${path}` : `(?i)^${escapeRegex(path)}`;
}

/** The redirect group's fields: permanent/temporal-redirect with relative-redirects and use-port-in-redirects. */
export function redirectRouteFields(server: Server, loc: Location): RouteUriFields | null {
  const r = loc.settings.redirect;
  if (!r) return {};
  const parts = redirectParts(r.url, server.hostname, REDIRECT_HOST_VARIABLES);
  if (redirectTargetProblem(r.url) !== null || parts === null) return null;
  return { return: { code: r.code, parts, absolute: !loc.settings.relativeRedirects, port: loc.settings.rewrite.usePortInRedirects } };
}

/** The rewrite group's fields: app-root, rewrite-target (with use-regex), x-forwarded-prefix. */
export function rewriteRouteFields(server: Server, loc: Location): RouteUriFields | null {
  const rw = loc.settings.rewrite;
  const out: RouteUriFields = {};
  if (rw.appRoot !== '') {
    if (!/^\/[^\s"'\\<>^`{|}$]*$/.test(rw.appRoot)) return null;
    out.appRoot = rw.appRoot;
  }
  if (rw.target !== '') {
    const regex = rewriteRegex(server.useRegex, loc.path);
    if (/\s/.test(regex) || /\s/.test(rw.target) || !checkRegex(regex, { caseless: true }).ok) return null;
    out.rewrite = { regex, target: rw.target };
  }
  if (rw.xForwardedPrefix !== '') out.xForwardedPrefix = rw.xForwardedPrefix;
  return out;
}

/** The upstream-vhost group's field: the location's variables are the route's constants. */
export function upstreamVhostRouteFields(server: Server, loc: Location): RouteUriFields {
  if (loc.settings.upstreamVhost === '') return {};
  const parts = redirectParts(loc.settings.upstreamVhost, server.hostname, {}, {
    namespace: loc.ingress?.namespace ?? '', ingress_name: loc.ingress?.name ?? '', service_name: loc.service?.name ?? '', service_port: loc.service?.port ?? '',
  });
  return parts === null ? {} : { upstreamVhost: parts };
}

/** The connection group's field. */
export function connectionRouteFields(loc: Location): RouteUriFields {
  return loc.settings.connectionHeader === '' ? {} : { connection: loc.settings.connectionHeader };
}
