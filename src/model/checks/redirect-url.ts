// Which redirect and rewrite values the Lua router answers exactly as a location's `return` and
// `rewrite` do (the annotation groups' perRequest and the route table both ask here), and the
// redirect values the renderer prints (src/render/filters.ts).
import { namesUnixSocket } from './validate.js';

/** NGINX variables a URL or redirect target may use on purpose (ingress-nginx documents these); the renderer keeps exactly these, and captures, as variables. */
export const REDIRECT_VARIABLE = /^(host|http_host|redirect_http_host|redirect_best_http_host|scheme|request_uri|escaped_request_uri|uri|args|is_args|server_name|server_port|remote_addr|request_method|request_id|remote_user|server_addr|best_http_host|pass_access_scheme|pass_server_port|(arg|http|cookie)_[a-z0-9_]+)$/;

/**
 * In a redirect the controller renders (permanent/temporal-redirect, auth-signin,
 * auth-tls-error-page, app-root), the Host header's variables stand for a validated host: `$host`
 * (which NGINX validated, and which a server's names or its host guard bound) with the Host
 * header's port (`$redirect_http_host`, nginx.conf.liquid), so `Host: a.test:1@evil.test` cannot
 * make a Location name evil.test.
 */
export const REDIRECT_HOST_VARIABLES: Readonly<Record<string, string>> = { http_host: 'redirect_http_host', best_http_host: 'redirect_best_http_host' };

/**
 * The variables every location sets for its route (src/render/location.ts), which the router
 * knows as the route's constants: a value naming them (upstream-vhost) takes them from the route.
 */
export const LOCATION_VARIABLE = /^(namespace|ingress_name|service_name|service_port)$/;

/** The route's values of the location variables, by name. */
export type LocationConstants = Readonly<Record<string, string>>;

/** Why the value is not an absolute http(s) URL NGINX's directives take as the renderer prints it, or null. */
export function absoluteUrlProblem(url: string): string | null {
  if (!/^https?:\/\/[^\s"'\\<>^`{|}]+$/.test(url.replace(/\$\{[A-Za-z0-9_]+\}/g, 'x'))) return `not an absolute http(s) URL: ${JSON.stringify(url.slice(0, 100))}`;
  if (namesUnixSocket(url)) return 'a URL naming a unix socket (http://unix:…) is not allowed';
  return null;
}

/** Why the value is neither a path nor an absolute http(s) URL a location's `return` may answer with, or null. */
export function redirectTargetProblem(target: string): string | null {
  if (!target.startsWith('/') || target.startsWith('//')) return absoluteUrlProblem(target);
  return /[\s"'\\<>^`{|}]/.test(target.replace(/\$\{[A-Za-z0-9_]+\}/g, 'x')) ? 'invalid characters in path' : null;
}

/**
 * A redirect URL (or an upstream-vhost) as NGINX reads the quoted value the renderer prints: `$name` and
 * `${name}` of an allowed variable are variables, every other `$` is literal. `$server_name` is
 * the host's own name (its server block's), a location variable (`$service_name`, …) the route's
 * value in `location`. null when the router cannot give the same value: a regex capture (`$1`,
 * the location's) or `$escaped_request_uri` (no such variable in the router).
 */
export function redirectParts(url: string, hostname: string, rename: Readonly<Record<string, string>> = {}, location: LocationConstants = {}): string[] | null {
  const parts: string[] = [''];
  const re = /\$(\{([A-Za-z0-9_]+)\}|([0-9])|([A-Za-z_][A-Za-z0-9_]*))?/g;
  let last = 0;
  for (let m = re.exec(url); m !== null; m = re.exec(url)) {
    parts[parts.length - 1] += url.slice(last, m.index);
    last = m.index + m[0].length;
    const name = m[2] ?? m[4];
    // A capture (`$1`, `${1}`) is the location's regex's; `$escaped_request_uri` no variable of the router's.
    if (m[3] !== undefined || (name !== undefined && /^[0-9]$/.test(name)) || name === 'escaped_request_uri') return null;
    if (name !== undefined && Object.hasOwn(location, name)) {
      parts[parts.length - 1] += location[name];
    } else if (name === undefined || !REDIRECT_VARIABLE.test(name)) {
      parts[parts.length - 1] += m[0];
    } else if (name === 'server_name') {
      parts[parts.length - 1] += hostname;
    } else {
      parts.push(rename[name] ?? name, '');
    }
  }
  parts[parts.length - 1] += url.slice(last);
  return parts;
}

/** Why the router cannot answer a redirect as the location's `return` does, or null. */
export function redirectStaticReason(redirect: { readonly url: string; readonly code: number } | null): string | null {
  if (redirect === null) return null;
  // For other codes `return` sends the URL as the body; the router only redirects.
  if (![301, 302, 303, 307, 308].includes(redirect.code)) return `redirect code ${redirect.code} answers with the URL as the body (NGINX's return)`;
  if (redirectParts(redirect.url, 'x') === null) return 'a redirect URL with a regex capture ($1) or $escaped_request_uri needs NGINX\'s return';
  return null;
}

/** Why the router cannot rewrite as the location does, or null. */
export function rewriteStaticReason(target: string): string | null {
  // NGINX's rewrite answers a redirect for these instead of rewriting.
  if (/^(https?:\/\/|\$scheme)/.test(target)) return 'a rewrite-target that is a URL is a redirect by NGINX\'s rewrite';
  // `$0` is no capture in a rewrite (NGINX reads it as a variable named 0).
  if (target.includes('$0')) return 'a rewrite-target with $0 needs NGINX\'s rewrite';
  return null;
}
