// The one rule that says where a host's routes live. Dynamic: matched and applied per request
// by the Lua router in the default server (and in static wildcard servers), from a route table
// the controller POSTs, so adding or changing them needs no reload. Static: a server block of
// their own in nginx.conf, as always. Per Ingress, every annotation group must be able to apply
// its value per request (each group declares for which values, `perRequest`); a group that
// declares nothing is static whenever the Ingress sets one of its keys, so a new group is static
// until someone shows otherwise. Per host, the routes are dynamic only if every Ingress on it is
// (a static server wins for its host), never for the default server, which does the matching.
import { ANNOTATION_GROUPS, defaultAnnotations, type ParsedAnnotations } from './annotations/index.js';
import type { NginxSettings } from '../core/config/settings.js';
import { DEFAULT_SERVER, locationMatch } from '../core/paths.js';
import type { Configuration, Location } from '../core/types.js';

export const DYNAMIC_ROUTES_OFF = 'dynamic routes are off (--enable-dynamic-routes=false)';
export const DEFAULT_SERVER_STATIC = 'the default server matches the dynamic hosts itself';

/** Most locations a dynamic host has; a bigger one is matched by NGINX's location tree. */
export const MAX_DYNAMIC_LOCATIONS = 1000;
/** Most regular-expression locations a dynamic host has (each may be tried on every request, as NGINX does). */
export const MAX_DYNAMIC_REGEX_LOCATIONS = 100;

/**
 * Why an Ingress's routes need a server block (the first group, in the groups' order, that
 * cannot apply its value per request), or null when the Lua router can serve them.
 */
export function ingressStaticReason(parsed: ParsedAnnotations, settings: NginxSettings): string | null {
  // The default server refuses every handshake: a host without a server block would get no TLS.
  if (settings.sslRejectHandshake) return 'ssl-reject-handshake (ConfigMap) refuses TLS for hosts without a server block';
  // The operator's snippets go into every server block and every location: the router's request
  // leaves the default server's locations for its own before NGINX would match theirs.
  if (settings.serverSnippet !== '') return 'server-snippet (ConfigMap) goes into every server block';
  if (settings.locationSnippet !== '') return 'location-snippet (ConfigMap) goes into every location';
  const defaults = defaultAnnotations(settings) as unknown as Record<string, unknown>;
  const value = parsed as unknown as Record<string, unknown>;
  for (const group of ANNOTATION_GROUPS) {
    if (group.perRequest) {
      const reason = group.perRequest(parsed, settings);
      if (reason !== null) return reason;
      continue;
    }
    // Undeclared: dynamic only while the Ingress leaves the group at its defaults (the same objects).
    if (value !== defaults && Object.keys(group.fields).some((f) => value[f] !== defaults[f])) {
      return `${Object.keys(group.keys).join(', ')}: the ${group.name} group is applied by NGINX directives only`;
    }
  }
  return null;
}

export interface HostRoutesInput {
  host: string;
  /** The host's non-canary Ingresses, oldest first, with their own verdicts. */
  ingresses: ReadonlyArray<{ readonly key: string; readonly staticReason: string | null }>;
  locations: readonly Location[];
  useRegex: boolean;
  dynamicRoutes: boolean;
}

/** Why a host's routes are a server block of nginx.conf, or null when they are dynamic. */
export function hostStaticReason(input: HostRoutesInput): string | null {
  if (!input.dynamicRoutes) return DYNAMIC_ROUTES_OFF;
  if (input.host === DEFAULT_SERVER) return DEFAULT_SERVER_STATIC;
  for (const ing of input.ingresses) if (ing.staticReason !== null) return `Ingress ${ing.key}: ${ing.staticReason}`;
  if (input.locations.length > MAX_DYNAMIC_LOCATIONS) return `${input.locations.length} locations (more than ${MAX_DYNAMIC_LOCATIONS} are matched by NGINX)`;
  let regexes = 0;
  for (const loc of input.locations) if (locationMatch(loc, input.useRegex).kind === 'regex') regexes++;
  if (regexes > MAX_DYNAMIC_REGEX_LOCATIONS) return `${regexes} regular-expression locations (more than ${MAX_DYNAMIC_REGEX_LOCATIONS} are matched by NGINX)`;
  return null;
}

/** The rule's outcome, one line per host (`render` and `dbg` print it). */
export function routeRuleLines(config: Configuration): string[] {
  if (!config.dynamicRoutes) return [`routes: every host static (${DYNAMIC_ROUTES_OFF})`];
  const out: string[] = [];
  for (const s of config.servers) {
    if (s.hostname === DEFAULT_SERVER) continue;
    out.push(s.staticBecause === null ? `routes: ${s.hostname}: dynamic` : `routes: ${s.hostname}: static: ${s.staticBecause}`);
  }
  return out;
}
