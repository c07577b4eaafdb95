// Shared validators for user input (annotations, ConfigMap data). Each check turns a raw string
// into a typed value that is safe to put into nginx.conf, or throws InvalidValue saying why.
import { isIPv4, isIPv6 } from 'node:net';

export class InvalidValue extends Error {}

/** A check: raw string → typed value, or throws InvalidValue. */
export type Check<T> = (raw: string) => T;

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

/** Like safeString but `$name` NGINX variables are allowed (e.g. `$host` in auth-signin). */
export const safeStringWithVariables: Check<string> = (raw) => {
  checkLength(raw);
  rejectChars(raw, /["';{}\\]|[\u0000-\u001f\u007f]/);
  const bad = /\$(?![A-Za-z_][A-Za-z0-9_]*)/.exec(raw);
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

/** An NGINX size: digits with an optional k/m/g suffix (`1m`, `8k`, `0`). */
export const size: Check<string> = (raw) => {
  const v = raw.trim();
  if (!/^\d{1,12}[kKmMgG]?$/.test(v)) invalid(`"${preview(raw)}" is not a size (e.g. 8k, 1m)`);
  return v;
};

/** An NGINX time: digits with an optional unit (`10s`, `5m`, `1h`, `500ms`). */
export const nginxTime: Check<string> = (raw) => {
  const v = raw.trim();
  if (!/^(\d{1,9}(ms|s|m|h|d|w|M|y)?)+$/.test(v)) invalid(`"${preview(raw)}" is not a time (e.g. 10s, 5m, 1h)`);
  return v;
};

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
    return raw.split(',').map((s) => s.trim()).filter((s) => s !== '').map(item);
  };
}

/** A list split on whitespace, each item checked. */
export function spaceList<T>(item: Check<T>): Check<T[]> {
  return (raw) => {
    checkLength(raw, 100_000);
    return raw.split(/\s+/).filter((s) => s !== '').map(item);
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
    rejectChars(v, /["'{};\\\s<>`]|[\u0000-\u001f\u007f]/);
    let parsed: URL;
    try {
      parsed = new URL(v);
    } catch {
      return invalid(`"${preview(raw)}" is not a valid URL`);
    }
    const scheme = parsed.protocol.replace(/:$/, '');
    if (!schemes.includes(scheme)) invalid(`URL scheme must be ${schemes.join(' or ')}, not "${preview(scheme)}"`);
    if (parsed.hostname === '') invalid('URL has no host');
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
  rejectChars(v, /["'{};\\$\s]|[\u0000-\u001f\u007f]/);
  checkLength(v);
  return v;
};

/** A regular expression that compiles and holds no NGINX-breaking characters. */
export const safeRegex: Check<string> = (raw) => {
  checkLength(raw);
  rejectChars(raw, /["';{}]|[\u0000-\u001f\u007f]/);
  if (/(^|[^\\])(\\\\)*\\$/.test(raw)) invalid('value ends with a lone backslash');
  try {
    new RegExp(raw);
  } catch (err) {
    invalid(`"${preview(raw)}" is not a valid regular expression: ${(err as Error).message}`);
  }
  return raw;
};

export const HTTP_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];
export const httpMethod: Check<HttpMethod> = oneOf(HTTP_METHODS, { caseInsensitive: true });

/** An HTTP status code. */
export const statusCode: Check<number> = int(100, 599);

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
