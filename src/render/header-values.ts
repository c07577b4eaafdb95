// Values with variables that NGINX puts into a header or a request line: a redirect's Location
// (permanent/temporal-redirect, auth-signin, auth-tls-error-page), upstream-vhost, the auth
// request's URL and headers. NGINX copies a variable's bytes there as they are, and some hold what
// a client chose, decoded: $uri and regex captures are URL-decoded (`%0d%0a` is CR LF),
// $remote_user is base64-decoded, a header or cookie may carry any control byte but CR, LF and
// NUL. A value holding such a variable is evaluated into a variable of its own and escaped by Lua
// (lua/util.lua), exactly as the Lua router escapes the same values on a dynamic host; a value of
// only the variables NGINX builds from bytes it validated is printed as it is.
import { I } from './blocks/layout.js';

/** Variables whose bytes NGINX builds or validated itself: no control byte can reach them. */
const CLEAN_VARIABLES: ReadonlySet<string> = new Set([
  'host', 'scheme', 'server_name', 'server_port', 'server_addr', 'remote_addr', 'request_method', 'request_id',
  'pass_access_scheme', 'pass_server_port', 'escaped_request_uri', 'is_args', 'redirect_http_host', 'literal_dollar',
]);

/**
 * The raw request target: NGINX answers 400 to a request line with a control byte other than tab
 * (HTTP/1.1 and HTTP/2 alike; test/security/response-splitting.test.ts sends them), and a header
 * may carry a tab, so in a header they need no escape; a request line they would still split.
 */
const REQUEST_TARGET = /^(request_uri|args|arg_[a-z0-9_]+)$/;

const VARIABLE = /\$(?:\{([A-Za-z0-9_]+)\}|([0-9])|([A-Za-z_][A-Za-z0-9_]*))/g;

/** Whether a quoted NGINX value (from a filter) names a variable that may hold a byte `place` must not carry. */
export function mayHoldControlBytes(quoted: string, place: ValuePlace = 'header'): boolean {
  for (const m of quoted.matchAll(VARIABLE)) {
    const name = m[1] ?? m[2] ?? m[3]!;
    if (CLEAN_VARIABLES.has(name) || (place === 'header' && REQUEST_TARGET.test(name))) continue;
    return true;
  }
  return false;
}

/** Where a value goes: a header (control bytes but tab escaped) or a request line (white space too). */
export type ValuePlace = 'header' | 'url';

export interface EscapedValue {
  /** Directives that fill `value` (empty when the value is printed as it is). */
  readonly setup: string;
  /** What the directive that sends the value prints. */
  readonly value: string;
}

/**
 * `quoted` (a filter's output) ready for a header or a request line. `variable` names the
 * variable it is evaluated into when it must be escaped: one per field of a location, so two
 * fields never share one.
 */
export function escapedValue(quoted: string, variable: string, place: ValuePlace, indent = I): EscapedValue {
  if (!mayHoldControlBytes(quoted, place)) return { setup: '', value: quoted };
  const escape = place === 'url' ? 'url_value' : 'header_value';
  return {
    setup: `${indent}set $${variable} ${quoted};\n`
      + `${indent}set_by_lua_block $${variable} {\n${indent}    return require("util").${escape}(ngx.var.${variable})\n${indent}}\n`,
    value: `$${variable}`,
  };
}
