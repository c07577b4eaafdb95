// Which redirect and rewrite values the Lua router answers exactly as a location's `return` and
// `rewrite` do (the annotation groups' perRequest and the route table both ask here).

/** Variables a redirect URL may use (the filters' quoteWithVariables keeps exactly these). */
const ALLOWED_VARIABLE = /^(host|http_host|scheme|request_uri|escaped_request_uri|uri|args|is_args|server_name|server_port|remote_addr|request_method|request_id|remote_user|server_addr|best_http_host|pass_access_scheme|pass_server_port|(arg|http|cookie)_[a-z0-9_]+)$/;
/** Of those, the ones the router's location gives the same value as the host's own location. */
const ROUTER_VARIABLE = /^(host|http_host|scheme|request_uri|uri|args|is_args|server_port|remote_addr|request_method|request_id|remote_user|server_addr|best_http_host|pass_access_scheme|pass_server_port|(arg|http|cookie)_[a-z0-9_]+)$/;
export const ESCAPED_URL = /^https?:\/\/[^\s"'\\<>^`{|}]+$/;
export const ESCAPED_PATH = /[\s"'\\<>^`{|}]/;

/**
 * A redirect URL (or an upstream-vhost) as NGINX reads the quoted value the renderer prints: `$name` and
 * `${name}` of an allowed variable are variables, every other `$` is literal. `$server_name` is
 * the host's own name (its server block's). null when the router cannot give the same value: a
 * regex capture (`$1`, the location's) or `$escaped_request_uri` (no such variable in the router).
 */
export function redirectParts(url: string, hostname: string): string[] | null {
  const parts: string[] = [''];
  const re = /\$(\{([A-Za-z0-9_]+)\}|([0-9])|([A-Za-z_][A-Za-z0-9_]*))?/g;
  let last = 0;
  for (let m = re.exec(url); m !== null; m = re.exec(url)) {
    parts[parts.length - 1] += url.slice(last, m.index);
    last = m.index + m[0].length;
    if (m[3] !== undefined) return null;
    const name = m[2] ?? m[4];
    if (name === undefined || !ALLOWED_VARIABLE.test(name)) {
      parts[parts.length - 1] += m[0];
    } else if (name === 'server_name') {
      parts[parts.length - 1] += hostname;
    } else if (ROUTER_VARIABLE.test(name)) {
      parts.push(name, '');
    } else {
      return null;
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

