// Shared validators for user input (annotations, ConfigMap data). Each check turns a raw string
// into a typed value that is safe to put into nginx.conf, or throws InvalidValue saying why.
import { isIPv4, isIPv6 } from 'node:net';
import { checkRegex } from './pcre.js';
import { describeAttack, regexCostProblem } from './regex-cost.js';

export class InvalidValue extends Error {}

/**
 * A check: raw string → typed value, or throws InvalidValue. A list whose bad entries are left
 * out, as ingress-nginx leaves them, names each through `warn` (when the caller passes one).
 */
export type Check<T> = (raw: string, warn?: (message: string) => void) => T;

function invalid(message: string): never {
  throw new InvalidValue(message);
}

/** Longest string value we accept anywhere (NGINX lines are not meant for novels). */
export const MAX_VALUE_LENGTH = 4096;

/** Characters that end or escape an NGINX token or string, plus `$` (variable interpolation). */
const NGINX_BREAKING = /["';{}\\$]|[\u0000-\u001f\u007f]/;

function describeChar(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  return code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : `'${c}'`;
}

function checkLength(raw: string, max = MAX_VALUE_LENGTH): void {
  if (raw.length > max) invalid(`value is ${raw.length} characters long (at most ${max})`);
}

function rejectChars(raw: string, pattern: RegExp): void {
  const m = pattern.exec(raw);
  if (m) invalid(`value contains ${describeChar(m[0])}, which is not allowed here`);
}

/** A free-form string that may appear inside an NGINX quoted string: no quotes, `;`, braces,
 *  backslash, `$` or control characters. */
export const safeString: Check<string> = (raw) => {
  checkLength(raw);
  rejectChars(raw, NGINX_BREAKING);
  return raw;
};

/**
 * Like safeString but NGINX variables, `$name` or `${name}`, are allowed (e.g. `$host` in
 * auth-signin, `${request_uri}` in upstream-hash-by, as ingress-nginx accepts): a brace only
 * around a variable's name.
 */
export const safeStringWithVariables: Check<string> = (raw) => {
  checkLength(raw);
  const unbraced = raw.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, '$$$1');
  rejectChars(unbraced, /["';{}\\]|[\u0000-\u001f\u007f]/);
  const bad = /\$(?![A-Za-z_][A-Za-z0-9_]*)/.exec(unbraced);
  if (bad) invalid('`$` must start an NGINX variable name');
  return raw;
};

/** Go's strconv.ParseBool, as ingress-nginx reads booleans. */
export const bool: Check<boolean> = (raw) => {
  const v = raw.trim();
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(v)) return false;
  return invalid(`"${preview(raw)}" is not a boolean (true or false)`);
};

export function int(min: number, max: number): Check<number> {
  return (raw) => {
    const v = raw.trim();
    if (!/^-?\d{1,15}$/.test(v)) invalid(`"${preview(raw)}" is not an integer`);
    const n = Number(v);
    if (n < min || n > max) invalid(`${n} is out of range [${min}, ${max}]`);
    return n;
  };
}

export function float(min: number, max: number): Check<number> {
  return (raw) => {
    const v = raw.trim();
    if (!/^-?\d{1,15}(\.\d{1,15})?$/.test(v)) invalid(`"${preview(raw)}" is not a number`);
    const n = Number(v);
    if (n < min || n > max) invalid(`${n} is out of range [${min}, ${max}]`);
    return n;
  };
}

/** One of a fixed set of words. */
export function oneOf<T extends string>(values: readonly T[], opts: { caseInsensitive?: boolean } = {}): Check<T> {
  return (raw) => {
    const v = raw.trim();
    const hit = values.find((x) => (opts.caseInsensitive ? x.toLowerCase() === v.toLowerCase() : x === v));
    if (hit === undefined) invalid(`"${preview(raw)}" is not one of ${values.join(', ')}`);
    return hit;
  };
}

const MAX_INT_T = 2n ** 63n - 1n;
const SIZE_SCALE: Record<string, bigint> = { k: 1024n, m: 1024n ** 2n, g: 1024n ** 3n };

/**
 * Bytes of an NGINX size as ngx_parse_size (`size_t` directives: buffers, zones; units k and m)
 * or ngx_parse_offset (`off_t`: client_max_body_size; units k, m and g) reads it; null when NGINX
 * refuses it (no digits, another unit, or more than 2^63-1 bytes).
 */
export function sizeBytes(raw: string, units: 'km' | 'kmg'): bigint | null {
  const m = /^(\d{1,30})([kKmMgG]?)$/.exec(raw);
  if (!m) return null;
  const unit = m[2]!.toLowerCase();
  if (unit !== '' && !units.includes(unit)) return null;
  const scale = SIZE_SCALE[unit] ?? 1n;
  const n = BigInt(m[1]!);
  return n > MAX_INT_T / scale ? null : n * scale;
}

function nginxSize(units: 'km' | 'kmg', what: string, limits: { min?: bigint; max?: bigint }): Check<string> {
  const unitText = units === 'km' ? 'k or m' : 'k, m or g';
  return (raw) => {
    const v = raw.trim();
    const bytes = sizeBytes(v, units);
    if (bytes === null) invalid(`"${preview(raw)}" is not ${what} (digits with an optional ${unitText}, at most 2^63-1 bytes)`);
    if (limits.min !== undefined && bytes < limits.min) invalid(`${v} is less than ${showBytes(limits.min)}, the least NGINX accepts here`);
    if (limits.max !== undefined && bytes > limits.max) invalid(`${v} is more than ${showBytes(limits.max)}, the most NGINX accepts here`);
    return v;
  };
}

function showBytes(n: bigint): string {
  for (const [u, s] of [['g', 1024n ** 3n], ['m', 1024n ** 2n], ['k', 1024n]] as const) if (n >= s && n % s === 0n) return `${n / s}${u}`;
  return String(n);
}

/** A `size_t` NGINX size (ngx_parse_size: `8k`, `1m`, `4096`; no g): buffer sizes. */
export const size: Check<string> = nginxSize('km', 'a size', {});

/** A size with bounds in bytes (e.g. a buffer that may not be 0, a shared zone of at least 8 pages). */
export const boundedSize = (min: bigint, max?: bigint): Check<string> => nginxSize('km', 'a size', { min, ...(max === undefined ? {} : { max }) });

/** proxy_buffers N S with proxy_buffer_size S: NGINX wants busy buffers (2S) ≤ (N-1)·S, so N ≥ 3. */
export const proxyBuffersNumber: Check<number> = int(3, 1024);
/** Not 0 (proxy_buffers refuses it), at most proxy_max_temp_file_size's default 1g. */
export const proxyBufferSize: Check<string> = boundedSize(1n, 1024n ** 3n);

/** An `off_t` NGINX size (ngx_parse_offset: `8k`, `1m`, `2g`): client_max_body_size. */
export const offset: Check<string> = nginxSize('kmg', 'a size', {});

const TIME_UNITS = ['y', 'M', 'w', 'd', 'h', 'm', 's', 'ms'] as const;
const TIME_SECONDS: Record<string, bigint> = { y: 31_536_000n, M: 2_592_000n, w: 604_800n, d: 86_400n, h: 3_600n, m: 60n, s: 1n };

/**
 * An NGINX time as ngx_parse_time reads it: parts with units in decreasing order, each at most
 * once, optionally separated by spaces; in milliseconds for `msec` directives (timeouts: no `y`
 * or `M`, `ms` allowed) or seconds (`proxy_cache_valid`, `ssl_session_timeout`: no `ms`). Null
 * when NGINX refuses it, the total otherwise (in the directive's unit).
 */
export function parseNginxTime(raw: string, unit: 'sec' | 'msec'): bigint | null {
  const re = /(\d+)(ms|[yMwdhms])? */y;
  let at = 0;
  let step = unit === 'sec' ? -1 : TIME_UNITS.indexOf('M');
  let total = 0n;
  let parts = 0;
  while (at < raw.length) {
    re.lastIndex = at;
    const m = re.exec(raw);
    if (!m) return null;
    at = re.lastIndex;
    parts++;
    const u = m[2] ?? '';
    const n = BigInt(m[1]!);
    if (u === '') {
      // A bare number ends the value: seconds (NGINX multiplies it by 1000 for msec).
      if (at < raw.length) return null;
      total += unit === 'msec' ? n * 1000n : n;
      break;
    }
    const idx = TIME_UNITS.indexOf(u as (typeof TIME_UNITS)[number]);
    if (idx <= step || (u === 'ms' && unit === 'sec')) return null;
    step = idx;
    total += u === 'ms' ? n : n * TIME_SECONDS[u]! * (unit === 'msec' ? 1000n : 1n);
    if (total > MAX_INT_T) return null;
  }
  return parts === 0 || total > MAX_INT_T ? null : total;
}

function nginxTimeCheck(unit: 'sec' | 'msec'): Check<string> {
  return (raw) => {
    const v = raw.trim();
    if (v.length > 64 || parseNginxTime(v, unit) === null) {
      invalid(`"${preview(raw)}" is not an NGINX time (e.g. 10s, 5m, 1h30m; units in decreasing order${unit === 'sec' ? '' : ', no y or M'})`);
    }
    // NGINX reads "1h 30m" as "1h30m"; without spaces the value needs no quoting.
    return v.replace(/ +/g, '');
  };
}

/** A time for a directive in seconds (`proxy_cache_valid`, `ssl_session_timeout`). */
export const timeSec: Check<string> = nginxTimeCheck('sec');
/** A time for a directive in milliseconds (timeouts, `keepalive_time`, `worker_shutdown_timeout`). */
export const timeMsec: Check<string> = nginxTimeCheck('msec');

/** An HTTP header name. */
export const headerName: Check<string> = (raw) => {
  const v = raw.trim();
  if (!/^[A-Za-z0-9-]{1,256}$/.test(v)) invalid(`"${preview(raw)}" is not a valid header name (letters, digits, '-')`);
  return v;
};

/** A comma-separated list of header names. */
export const headerNameList: Check<string[]> = (raw) => commaList(headerName)(raw);

/** A list split on commas (empty items dropped), each item checked. */
export function commaList<T>(item: Check<T>): Check<T[]> {
  return (raw) => {
    checkLength(raw, 100_000);
    return raw.split(',').map((s) => s.trim()).filter((s) => s !== '').map((s) => item(s));
  };
}

/** A list split on whitespace, each item checked. */
export function spaceList<T>(item: Check<T>): Check<T[]> {
  return (raw) => {
    checkLength(raw, 100_000);
    return raw.split(/\s+/).filter((s) => s !== '').map((s) => item(s));
  };
}

/** An IPv4/IPv6 address or network (`10.0.0.0/8`, `::1`, `2001:db8::/32`). */
export const cidr: Check<string> = (raw) => {
  const v = raw.trim();
  const [ip, prefix, ...rest] = v.split('/');
  if (rest.length > 0 || ip === undefined) invalid(`"${preview(raw)}" is not an IP address or CIDR`);
  const max = isIPv4(ip) ? 32 : isIPv6(ip) ? 128 : invalid(`"${preview(raw)}" is not an IP address or CIDR`);
  if (prefix !== undefined) {
    if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) invalid(`"${preview(raw)}" has an invalid prefix length`);
    return `${ip}/${Number(prefix)}`;
  }
  return ip;
};

export const cidrList: Check<string[]> = commaList(cidr);

/** `scheme://unix:…`: NGINX's proxy_pass takes that host as a unix socket path, in any case. */
export function namesUnixSocket(url: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\/unix:/i.test(url.trim());
}

/** A URL with one of the given schemes; NGINX variables (`$host`) are allowed in it. */
export function url(schemes: readonly string[] = ['http', 'https']): Check<string> {
  return (raw) => {
    const v = raw.trim();
    checkLength(v);
    // What the renderer's url filter refuses as well: characters a URL may not hold unencoded.
    rejectChars(v, /["'{};\\\s<>`^|]|[\u0000-\u001f\u007f]/);
    let parsed: URL;
    try {
      parsed = new URL(v);
    } catch {
      return invalid(`"${preview(raw)}" is not a valid URL`);
    }
    const scheme = parsed.protocol.replace(/:$/, '');
    if (!schemes.includes(scheme)) invalid(`URL scheme must be ${schemes.join(' or ')}, not "${preview(scheme)}"`);
    if (parsed.hostname === '') invalid('URL has no host');
    // ingress-nginx's URL check refuses it too: no DNS name has an empty label.
    if (parsed.hostname.includes('..')) invalid(`URL host "${preview(parsed.hostname)}" has an empty label`);
    if (namesUnixSocket(v)) invalid('URL names a unix socket (NGINX reads http://unix:/path: as one); unix sockets are not allowed');
    safeStringWithVariables(v);
    return v;
  };
}

/** A DNS host name (optionally a leading `*.` wildcard). */
export function hostname(opts: { wildcard?: boolean; port?: boolean } = {}): Check<string> {
  const label = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
  const re = new RegExp(`^${opts.wildcard ? '(\\*\\.)?' : ''}${label}(\\.${label})*${opts.port ? '(:\\d{1,5})?' : ''}$`);
  return (raw) => {
    const v = raw.trim();
    if (v.length > 253 || !re.test(v)) invalid(`"${preview(raw)}" is not a valid host name`);
    return v.toLowerCase();
  };
}

/** A cookie name (RFC 6265 token, without characters NGINX or Lua would treat specially). */
export const cookieName: Check<string> = (raw) => {
  const v = raw.trim();
  if (!/^[A-Za-z0-9!#%&*+.^_|~-]{1,256}$/.test(v)) invalid(`"${preview(raw)}" is not a valid cookie name`);
  return v;
};

/** A cookie Path attribute. */
export const cookiePath: Check<string> = (raw) => {
  const v = raw.trim();
  if (!/^\/[A-Za-z0-9._~!&()*+,=:@%/-]{0,1024}$/.test(v)) invalid(`"${preview(raw)}" is not a valid cookie path`);
  return v;
};

/** A cookie Domain attribute. */
export const cookieDomain: Check<string> = (raw) => {
  const v = raw.trim().replace(/^\./, '');
  hostname()(v);
  return raw.trim();
};

/** A URI path (`/foo/bar`), no NGINX-breaking characters. */
export const uriPath: Check<string> = (raw) => {
  const v = raw.trim();
  if (!v.startsWith('/')) invalid(`"${preview(raw)}" must start with /`);
  rejectChars(v, /["'{};\\$\s<>^`|]|[\u0000-\u001f\u007f]/);
  checkLength(v);
  return v;
};

/**
 * A regular expression that NGINX's PCRE2 compiles (see ./pcre.ts) and that holds no
 * NGINX-breaking characters; named groups are refused, since NGINX turns them into variables
 * shared by the whole configuration.
 */
export function pcreRegex(opts: { caseless: boolean }): Check<string> {
  return (raw) => {
    checkLength(raw);
    rejectChars(raw, /["';{}]|[\u0000-\u001f\u007f]/);
    if (/(^|[^\\])(\\\\)*\\$/.test(raw)) invalid('value ends with a lone backslash');
    const r = checkRegex(raw, opts);
    if (!r.ok) invalid(`"${preview(raw)}" is not a regular expression NGINX accepts: ${r.error} at offset ${r.offset}`);
    if (r.names.length > 0) invalid(`named groups (${r.names.slice(0, 3).map((n) => `"${preview(n, 32)}"`).join(', ')}) are not allowed: NGINX makes each a variable of the whole configuration; use numbered groups`);
    const cost = regexCostProblem(raw, opts.caseless);
    if (cost) invalid(`"${preview(raw)}" ${cost.reason}${cost.attack === undefined ? '' : ` (attack: ${describeAttack(cost.attack)})`}`);
    return raw;
  };
}

/** A regular expression for Lua's ngx.re (case-sensitive), as NGINX's PCRE2 compiles it. */
export const safeRegex: Check<string> = pcreRegex({ caseless: false });

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
export const httpMethod: Check<HttpMethod> = oneOf(HTTP_METHODS, { caseInsensitive: true });

/** An HTTP status code. */
export const statusCode: Check<number> = int(100, 599);
/** A status code `error_page` takes (custom-http-errors): 300..599 but 499, NGINX's own "client closed". */
export const errorPageCode: Check<number> = (raw) => {
  const code = int(300, 599)(raw);
  if (code === 499) invalid('499 is NGINX\'s "client closed request"; error_page does not take it');
  return code;
};
/** A status code `limit_req_status` / `limit_conn_status` take. */
export const limitStatusCode: Check<number> = int(400, 599);

/** The first blocked word the value contains (case-insensitive), or undefined. */
export function blockedWord(value: string, blocklist: readonly string[]): string | undefined {
  const lower = value.toLowerCase();
  return blocklist.find((w) => w !== '' && lower.includes(w.toLowerCase()));
}

/** A short, printable excerpt of a value for messages. */
export function preview(raw: string, max = 64): string {
  // eslint-disable-next-line no-control-regex
  const printable = raw.replace(/[\u0000-\u001f\u007f"\\]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return printable.length > max ? `${printable.slice(0, max)}…` : printable;
}

/** Runs a check, returning the fallback and reporting the message when it throws. */
export function attempt<T>(raw: string, check: Check<T>, fallback: T, report: (message: string) => void): T {
  try {
    return check(raw);
  } catch (err) {
    if (err instanceof InvalidValue) {
      report(err.message);
      return fallback;
    }
    throw err;
  }
}

export const NEXT_UPSTREAM_CONDITIONS = [
  'error', 'timeout', 'invalid_header', 'http_500', 'http_502', 'http_503', 'http_504',
  'http_403', 'http_404', 'http_429', 'non_idempotent', 'off',
] as const;

/** proxy_next_upstream conditions, space-separated. */
export const nextUpstream: Check<string[]> = (raw) => {
  const items = spaceList(oneOf(NEXT_UPSTREAM_CONDITIONS))(raw);
  if (items.length === 0) invalid('at least one condition is needed');
  return items;
};

export const onOff: Check<'on' | 'off'> = oneOf(['on', 'off'] as const);

/** Sorted, without duplicates (lists of networks are sets; sorting keeps the model canonical). */
export function sortedUnique(items: readonly string[]): string[] {
  return [...new Set(items)].sort();
}
