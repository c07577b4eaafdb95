// Escaping filters: one per NGINX context. Each validates and escapes the value it prints and
// throws a RenderError naming the field when the value cannot be made safe. The templates
// never print a Configuration string without one of these.
//
// Quoting scheme: strings are always double-quoted with `\` and `"` escaped. NGINX has no
// escape for `$` in strings that take variables, so a literal `$` becomes `${literal_dollar}`,
// a variable defined once at http level (`geo $literal_dollar { default "$"; }`). Control
// characters (newlines included) are refused.
import { isIP } from 'node:net';
import type { Liquid } from 'liquidjs';
import { REDIRECT_HOST_VARIABLES, REDIRECT_VARIABLE, absoluteUrlProblem, redirectTargetProblem } from '../model/checks/redirect-url.js';
import { operatorSnippetProblem, snippetProblem, type SnippetContext } from '../model/checks/snippet-check.js';
import { MAX_RULES_CHUNK, quoteForNginx, tenantRulesProblem } from '../model/checks/seclang.js';
import { checkRegex } from '../model/checks/pcre.js';

export class RenderError extends Error {
  constructor(readonly field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'RenderError';
  }
}

const CONTROL = /[\u0000-\u001f\u007f]/;
const MAX_LEN = 4096;

function str(v: unknown, field: string): string {
  if (typeof v !== 'string' && typeof v !== 'number') throw new RenderError(field, `expected a string, got ${v === null ? 'null' : typeof v}`);
  const s = String(v);
  if (CONTROL.test(s)) throw new RenderError(field, 'control characters (newline, tab...) are not allowed');
  if (s.length > MAX_LEN) throw new RenderError(field, `longer than ${MAX_LEN} characters`);
  return s;
}

const QUOTE_OR_BACKSLASH = /[\\"]/;

function escapeQuoted(s: string): string {
  return QUOTE_OR_BACKSLASH.test(s) ? s.replace(/[\\"]/g, (c) => `\\${c}`) : s;
}

/** What quote() and quoteLiteral() change or refuse in a string (anything else is printed as it is). */
const QUOTE_WORK = /[\u0000-\u001f\u007f\\"$]/;

/** A quoted string in a context that interpolates variables: `$` is printed literally. */
export function quote(v: unknown, field = 'value'): string {
  // The names of every location (namespace, Service, backend…) need nothing: one scan, not three.
  if (typeof v === 'string' && v.length <= MAX_LEN && !QUOTE_WORK.test(v)) return `"${v}"`;
  const s = escapeQuoted(str(v, field));
  return `"${s.includes('$') ? s.replace(/\$/g, '${literal_dollar}') : s}"`;
}

/** A quoted string in a context that does not interpolate variables (paths, regexes, realms of no-variable directives). */
export function quoteLiteral(v: unknown, field = 'value'): string {
  if (typeof v === 'string' && v.length <= MAX_LEN && !QUOTE_WORK.test(v)) return `"${v}"`;
  return `"${escapeQuoted(str(v, field))}"`;
}


/**
 * Quoted, with `$name` / `${name}` kept for allowed variables (by default those of redirect URLs)
 * and every other `$` made literal; `rename` gives a variable another name (REDIRECT_HOST_VARIABLES
 * in redirects).
 */
export function quoteWithVariables(v: unknown, field = 'value', rename: Readonly<Record<string, string>> = {}, allowed: (name: string) => boolean = (name) => REDIRECT_VARIABLE.test(name)): string {
  const s = escapeQuoted(str(v, field));
  // NGINX reads one digit after `$` as a regex capture (`$1abc` is capture 1, then `abc`).
  const out = s.replace(/\$(\{([A-Za-z0-9_]+)\}|([0-9])|([A-Za-z_][A-Za-z0-9_]*))?/g, (m, _g, braced?: string, digit?: string, bare?: string) => {
    if (digit !== undefined) return m;
    const name = braced ?? bare;
    if (name === undefined) return '${literal_dollar}';
    if (/^[0-9]$/.test(name)) return m;
    if (allowed(name)) return rename[name] === undefined ? m : `\${${rename[name]}}`;
    return `\${literal_dollar}${m.slice(1)}`;
  });
  return `"${out}"`;
}

/** An absolute http(s) URL; allowed NGINX variables (e.g. `$host`, `$escaped_request_uri`) are kept. */
export function url(v: unknown, field = 'url'): string {
  const s = str(v, field);
  const problem = absoluteUrlProblem(s);
  if (problem !== null) throw new RenderError(field, problem);
  return quoteWithVariables(s, field);
}

/** A redirect target: an absolute URL or a path; the Host header's variables name a validated host. */
export function redirectTarget(v: unknown, field = 'redirect'): string {
  const s = str(v, field);
  const problem = redirectTargetProblem(s);
  if (problem !== null) throw new RenderError(field, problem);
  return quoteWithVariables(s, field, REDIRECT_HOST_VARIABLES);
}

/** An absolute http(s) URL a redirect sends the client to (auth-signin): as `url`, the Host header's variables naming a validated host. */
export function redirectUrl(v: unknown, field = 'url'): string {
  const s = str(v, field);
  const problem = absoluteUrlProblem(s);
  if (problem !== null) throw new RenderError(field, problem);
  return quoteWithVariables(s, field, REDIRECT_HOST_VARIABLES);
}

/** A location path printed as a literal (prefix or exact match). */
export function path(v: unknown, field = 'path'): string {
  const s = str(v, field);
  if (!s.startsWith('/')) throw new RenderError(field, 'a path must start with /');
  if (/\s/.test(s)) throw new RenderError(field, 'a path must not contain white space');
  return quoteLiteral(s, field);
}

/** A PCRE regular expression (location ~*, rewrite), quoted; `{`, `}` and `;` are safe inside quotes. */
export function regex(v: unknown, field = 'regex'): string {
  const s = str(v, field);
  if (/\s/.test(s)) throw new RenderError(field, 'a regular expression must not contain white space (use \\s)');
  const r = checkRegex(s, { caseless: true });
  if (!r.ok) throw new RenderError(field, `not a regular expression NGINX accepts: ${r.error}`);
  return quoteLiteral(s, field);
}

/** A rewrite replacement: captures `$1`..`$9` and allowed variables kept, any other `$` literal. */
export function rewriteTarget(v: unknown, field = 'rewrite-target'): string {
  const s = str(v, field);
  if (/\s/.test(s)) throw new RenderError(field, 'must not contain white space');
  return quoteWithVariables(s, field);
}

/** A host name for server_name (`_`, a DNS name, or a leading wildcard). */
export function host(v: unknown, field = 'host'): string {
  const s = str(v, field);
  if (s === '_') return s;
  if (!/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?)*\.?$/.test(s) || s.length > 253) {
    throw new RenderError(field, `not a valid host name: ${JSON.stringify(s.slice(0, 100))}`);
  }
  return s.toLowerCase();
}

/** An HTTP header name (token characters NGINX modules accept). */
export function headerName(v: unknown, field = 'header name'): string {
  const s = str(v, field);
  if (!/^[A-Za-z0-9_-]{1,256}$/.test(s)) throw new RenderError(field, `not a valid header name: ${JSON.stringify(s.slice(0, 100))}`);
  return s;
}

/** An NGINX size: `0`, `512`, `8k`, `1m`, `2g`. */
export function size(v: unknown, field = 'size'): string {
  const s = str(v, field).trim();
  if (!/^\d{1,19}[kKmMgG]?$/.test(s)) throw new RenderError(field, `not an NGINX size: ${JSON.stringify(s.slice(0, 100))}`);
  return s;
}

/** An NGINX duration: a number of seconds or a combination such as `1h30m`, `500ms`. */
export function duration(v: unknown, field = 'duration'): string {
  if (typeof v === 'number') return `${num(v, field)}s`;
  const s = str(v, field).trim();
  if (s.length > 64 || !/^(\d{1,19}(ms|s|m|h|d|w|M|y)?)+$/.test(s)) throw new RenderError(field, `not an NGINX duration: ${JSON.stringify(s.slice(0, 100))}`);
  return /^\d+$/.test(s) ? `${s}s` : s;
}

/** A non-negative integer. */
export function num(v: unknown, field = 'number'): string {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 2 ** 53) throw new RenderError(field, `not a non-negative integer: ${JSON.stringify(v)}`);
  return String(n);
}

/** A boolean as `on`/`off`. */
export function onoff(v: unknown, field = 'flag'): string {
  if (v === true || v === 'on') return 'on';
  if (v === false || v === 'off') return 'off';
  throw new RenderError(field, `not a boolean: ${JSON.stringify(v)}`);
}

/** A boolean as a Lua literal. */
export function luaBool(v: unknown, field = 'flag'): string {
  if (typeof v !== 'boolean') throw new RenderError(field, `not a boolean: ${JSON.stringify(v)}`);
  return v ? 'true' : 'false';
}

/** An IPv4/IPv6 address or CIDR. */
export function cidr(v: unknown, field = 'cidr'): string {
  const s = str(v, field).trim();
  const [addr, bits, extra] = s.split('/');
  const family = isIP(addr ?? '');
  const max = family === 4 ? 32 : 128;
  if (!family || extra !== undefined || (bits !== undefined && (!/^\d{1,3}$/.test(bits) || Number(bits) > max))) {
    throw new RenderError(field, `not an IP address or CIDR: ${JSON.stringify(s.slice(0, 100))}`);
  }
  return s;
}

/**
 * A Lua string literal for `*_by_lua_block` bodies. Every byte outside a small safe set is a
 * decimal escape, so neither NGINX's block lexer nor Lua ever sees a quote, brace or newline.
 */
/** Characters luaString prints as they are. */
const LUA_PLAIN = /^[0-9A-Za-z\-./_: ]*$/;

export function luaString(v: unknown, field = 'value'): string {
  if (typeof v !== 'string') throw new RenderError(field, `expected a string, got ${typeof v}`);
  if (v.length > 65536) throw new RenderError(field, 'too long');
  if (LUA_PLAIN.test(v)) return `"${v}"`;
  let out = '"';
  for (const b of Buffer.from(v, 'utf8')) {
    out += (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x2d || b === 0x2e || b === 0x2f || b === 0x5f || b === 0x3a || b === 0x20
      ? String.fromCharCode(b)
      : `\\${String(b).padStart(3, '0')}`;
  }
  return `${out}"`;
}

/** A user-agent or referer pattern for a map: `~*regex` or a literal, quoted. */
export function mapPattern(v: unknown, field = 'pattern'): string {
  const s = str(v, field);
  // Quoted, a space belongs to the pattern: ingress-nginx's users write it `\ ` (its template
  // prints patterns unquoted), which PCRE reads as a space too.
  if (s.startsWith('~')) {
    const r = checkRegex(s.replace(/^~\*?/, ''), { caseless: s.startsWith('~*') });
    if (!r.ok) throw new RenderError(field, `not a regular expression NGINX accepts: ${r.error}`);
  }
  return quoteLiteral(s, field);
}

/** Free text inside a `#` comment: anything but a small safe set becomes `_`. */
export function comment(v: unknown): string {
  return String(v ?? '').slice(0, 200).replace(/[^A-Za-z0-9 ._:/=@,()-]/g, '_');
}

/** `"Name: value"` for more_set_headers; the value may not hold control characters. */
export function moreHeader(name: unknown, value: unknown, field = 'header'): string {
  const n = headerName(name, field);
  return quote(`${n}: ${str(value, `${field}[${n}]`)}`, field);
}

/** The app-root redirect target: a path on the same host (the validated host, with the Host header's port). */
export function appRoot(v: unknown, field = 'app-root'): string {
  const s = str(v, field);
  if (!/^\/[^\s"'\\<>^`{|}$]*$/.test(s)) throw new RenderError(field, `not a path: ${JSON.stringify(s.slice(0, 100))}`);
  return `"$scheme://$redirect_http_host${escapeQuoted(s)}"`;
}

/**
 * A snippet is NGINX configuration by definition (allowed by the operator, refused earlier
 * otherwise). It is read again as NGINX will read it, so it cannot leave the block it sits in.
 */
export function snippet(v: unknown, field = 'snippet'): string {
  if (typeof v !== 'string') throw new RenderError(field, 'expected a string');
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(v)) throw new RenderError(field, 'control characters are not allowed');
  const problem = snippetProblem(v);
  if (problem) throw new RenderError(field, problem);
  return v.split('\n').join('\n        ');
}

/** A tenant's stream-snippet: as `snippet`, but it may open stream `server` and `upstream` blocks. */
export function streamSnippet(v: unknown, field = 'stream-snippet'): string {
  return checkedSnippet(v, field, (s) => snippetProblem(s, { blocks: ['server', 'upstream'] }));
}

/**
 * The operator's snippet (a ConfigMap key) for one context: any directive, read again as NGINX
 * will read it so that it stays in the block it is put in.
 */
export function operatorSnippet(v: unknown, field: string, context: SnippetContext): string {
  return checkedSnippet(v, field, (s) => operatorSnippetProblem(s, context));
}

function checkedSnippet(v: unknown, field: string, problemOf: (s: string) => string | null): string {
  if (typeof v !== 'string') throw new RenderError(field, 'expected a string');
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(v)) throw new RenderError(field, 'control characters are not allowed');
  const problem = problemOf(v);
  if (problem) throw new RenderError(field, problem);
  return v;
}

/** A key made only of NGINX variables (`$binary_remote_addr`), e.g. a limit zone's. */
export function variables(v: unknown, field = 'variables'): string {
  const s = str(v, field);
  if (!/^(\$[A-Za-z_][A-Za-z0-9_]*){1,16}$/.test(s)) throw new RenderError(field, `not NGINX variables: ${JSON.stringify(s.slice(0, 100))}`);
  return s;
}

/**
 * ModSecurity rules as one single-quoted `modsecurity_rules` parameter: escaped so that NGINX
 * hands ModSecurity exactly `v`; a tenant's rules must also pass the tenant subset.
 */
export function modsecurityRules(v: unknown, field = 'modsecurity-snippet', opts: { tenant: boolean } = { tenant: true }): string {
  if (typeof v !== 'string') throw new RenderError(field, 'expected a string');
  if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(v)) throw new RenderError(field, 'control characters are not allowed');
  if (opts.tenant) {
    const problem = tenantRulesProblem(v);
    if (problem) throw new RenderError(field, problem);
  }
  const quoted = quoteForNginx(v);
  if (quoted.length > MAX_RULES_CHUNK) throw new RenderError(field, `a piece of ${quoted.length} bytes is longer than NGINX takes in one parameter`);
  return `'${quoted}'`;
}

/** proxy_http_version. */
export function httpVersion(v: unknown, field = 'http version'): string {
  if (v !== '1.0' && v !== '1.1') throw new RenderError(field, `not an HTTP version: ${JSON.stringify(v)}`);
  return v;
}

/** `number size`, e.g. `4 8k` (large_client_header_buffers). */
export function buffers(v: unknown, field = 'buffers'): string {
  const s = str(v, field).trim();
  if (!/^\d{1,6} \d{1,9}[kKmM]?$/.test(s)) throw new RenderError(field, `not "number size": ${JSON.stringify(s.slice(0, 100))}`);
  return s;
}

/** A log format, single-quoted; NGINX variables are its point, quotes and backslashes are refused. */
export function logFormat(v: unknown, field = 'log-format'): string {
  const s = str(v, field);
  if (/['\\]/.test(s)) throw new RenderError(field, 'single quotes and backslashes are not allowed');
  return `'${s}'`;
}

/** A listen address: `*`, `[::]`, an IPv4 or (bracketed) IPv6 address. */
export function listenAddress(a: string): string {
  if (a === '*' || a === '[::]') return a;
  const bare = a.replace(/^\[|\]$/g, '');
  cidr(bare, 'listen address');
  return bare.includes(':') ? `[${bare}]` : bare;
}

/** An OpenSSL list (ciphers, curves): names, `:`, `+`, `!`, `-`, `@`, `=`. */
export function opensslList(v: unknown, field = 'openssl list'): string {
  const s = str(v, field);
  if (!/^[A-Za-z0-9:+!@=_.-]{1,2048}$/.test(s)) throw new RenderError(field, `not an OpenSSL list: ${JSON.stringify(s.slice(0, 100))}`);
  return s;
}

/** All filters, named as the templates use them. */
export const FILTERS: Record<string, (v: unknown, field?: string) => string> = {
  q: quote, ql: quoteLiteral, qv: quoteWithVariables, url, redirect_target: redirectTarget, path, regex,
  rewrite_target: rewriteTarget, host, header_name: headerName, size, duration, num, onoff, lua_bool: luaBool,
  cidr, lua_str: luaString, map_pattern: mapPattern, comment, more_header: moreHeader as (v: unknown, f?: string) => string,
  app_root: appRoot, snippet, num_version: httpVersion, buffers, log_format: logFormat, openssl: opensslList,
};

export function registerFilters(engine: Liquid, extra: Record<string, (...args: any[]) => string> = {}): void {
  for (const [name, fn] of Object.entries({ ...FILTERS, ...extra })) engine.registerFilter(name, fn);
}
