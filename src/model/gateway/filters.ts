// HTTPRoute rule filters → the core's RouteFilters, every value checked: header names are
// tokens, values have no control character (CR, LF, NUL) and bounded lengths, host names and
// paths pass the Ingress checks. A filter that cannot be served sets its rule aside (named).
import type { HTTPBackendRef, HTTPRouteRule } from '../../store/kube-types.js';
import type { HeaderEdits, PathReplacement, RouteCors, RouteFilters } from '../core/types.js';
import { escapeRegex } from '../checks/pcre.js';
import { hostProblem, pathProblem } from '../core/paths.js';

/** An HTTP header name (RFC 9110 token), as the CRD's pattern allows. */
export const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]{1,256}$/;
export const MAX_HEADER_VALUE = 4096;
// eslint-disable-next-line no-control-regex
export const CONTROL = /[\x00-\x1f\x7f]/;
/** Headers that frame the message or the connection, and Host (URLRewrite's hostname sets it): not edited. */
const RESERVED = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade']);
const MAX_EDITS = 16;
const SERVED = new Set(['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestRedirect', 'URLRewrite', 'RequestMirror', 'CORS']);
/** RequestMirror filters of one rule (the spec allows several). */
const MAX_MIRRORS = 8;
const MAX_DENOMINATOR = 1_000_000;

/** A RequestMirror's backendRef and share, checked by the translator (ReferenceGrant) into RouteFilters.mirrors. */
export interface MirrorRef { readonly field: string; readonly ref: HTTPBackendRef; readonly numerator: number; readonly denominator: number }
export type RuleFilters = RouteFilters & { readonly mirrorRefs?: readonly MirrorRef[] };

type Filter = { type?: string; requestHeaderModifier?: unknown; responseHeaderModifier?: unknown; requestRedirect?: unknown; urlRewrite?: unknown; requestMirror?: unknown; cors?: unknown };

/** The rule's filters (null: none), or a problem naming the field. `prefixOnly`: every match of the rule is a PathPrefix one. */
export function ruleFilters(rule: HTTPRouteRule, at: string, prefixOnly: boolean, strictPaths: boolean): RuleFilters | null | { problem: string; field: string } {
  const list = (rule.filters ?? []) as Filter[];
  if (list.length === 0) return null;
  const out: { -readonly [K in keyof RouteFilters]: RouteFilters[K] } = {};
  const mirrorRefs: MirrorRef[] = [];
  const seen = new Set<string>();
  for (const [k, f] of list.entries()) {
    const field = `${at}.filters[${k}]`;
    const type = String(f?.type ?? '');
    if (!SERVED.has(type)) return { field, problem: `filter ${JSON.stringify(type.slice(0, 40))} is not supported yet` };
    if (type === 'RequestMirror') {
      const m = mirror(f.requestMirror, `${field}.requestMirror`);
      if ('problem' in m) return m;
      if (mirrorRefs.length === MAX_MIRRORS) return { field, problem: `more than ${MAX_MIRRORS} RequestMirror filters` };
      mirrorRefs.push(m.value);
      continue;
    }
    if (seen.has(type)) return { field, problem: `a second ${type} filter (the spec allows one)` };
    seen.add(type);
    const config = { RequestHeaderModifier: 'requestHeaderModifier', ResponseHeaderModifier: 'responseHeaderModifier', RequestRedirect: 'requestRedirect', URLRewrite: 'urlRewrite', CORS: 'cors' }[type] as keyof Filter;
    if (f[config] === null || typeof f[config] !== 'object') return { field: `${field}.${config}`, problem: `${type} needs its ${config}` };
    let r: { value: unknown } | { problem: string; field: string };
    if (type === 'RequestHeaderModifier') r = headerEdits(f.requestHeaderModifier, `${field}.requestHeaderModifier`);
    else if (type === 'ResponseHeaderModifier') r = headerEdits(f.responseHeaderModifier, `${field}.responseHeaderModifier`);
    else if (type === 'RequestRedirect') r = redirect(f.requestRedirect, `${field}.requestRedirect`, prefixOnly, strictPaths);
    else if (type === 'CORS') r = cors(f.cors, `${field}.cors`);
    else r = rewrite(f.urlRewrite, `${field}.urlRewrite`, prefixOnly, strictPaths);
    if ('problem' in r) return r;
    if (type === 'CORS') {
      if (r.value !== null) out.cors = r.value as RouteCors;
      continue;
    }
    if (type === 'RequestHeaderModifier') out.requestHeaders = r.value as HeaderEdits;
    else if (type === 'ResponseHeaderModifier') out.responseHeaders = r.value as HeaderEdits;
    else if (type === 'RequestRedirect') out.redirect = r.value as RouteFilters['redirect'];
    else out.rewrite = r.value as RouteFilters['rewrite'];
  }
  if (out.redirect && out.rewrite) return { field: `${at}.filters`, problem: 'RequestRedirect and URLRewrite cannot be used together' };
  return mirrorRefs.length > 0 ? { ...out, mirrorRefs } : out;
}

/** A backendRef's filters: header edits only (null: none), or a problem naming the field. */
export function backendFilters(list: unknown[] | undefined, at: string): { requestHeaders?: HeaderEdits; responseHeaders?: HeaderEdits } | null | { problem: string; field: string } {
  if (!list || list.length === 0) return null;
  const out: { requestHeaders?: HeaderEdits; responseHeaders?: HeaderEdits } = {};
  for (const [k, f] of (list as Filter[]).entries()) {
    const field = `${at}.filters[${k}]`;
    const type = String(f?.type ?? '');
    if (type !== 'RequestHeaderModifier' && type !== 'ResponseHeaderModifier') return bad(field, `filter ${JSON.stringify(type.slice(0, 40))} is not supported on backendRefs (RequestHeaderModifier and ResponseHeaderModifier are)`);
    const key = type === 'RequestHeaderModifier' ? 'requestHeaders' : 'responseHeaders';
    if (out[key]) return bad(field, `a second ${type} filter (the spec allows one)`);
    const config = type === 'RequestHeaderModifier' ? 'requestHeaderModifier' : 'responseHeaderModifier';
    if (f[config] === null || typeof f[config] !== 'object') return bad(`${field}.${config}`, `${type} needs its ${config}`);
    const r = headerEdits(f[config], `${field}.${config}`);
    if ('problem' in r) return r;
    out[key] = r.value;
  }
  return out;
}

/** A RequestMirror: its backendRef (kind and grant checked by the translator) and its share (`percent`, or `fraction`; all by default). */
function mirror(v: unknown, field: string): { value: MirrorRef } | { problem: string; field: string } {
  const o = obj(v);
  const ref = obj(o.backendRef);
  if (typeof ref.name !== 'string' || ref.name === '') return bad(`${field}.backendRef`, 'needs a backendRef with a name');
  let numerator = 1;
  let denominator = 1;
  if (o.percent !== undefined && o.fraction !== undefined) return bad(field, 'percent and fraction cannot be used together');
  if (o.percent !== undefined) {
    if (typeof o.percent !== 'number' || !Number.isInteger(o.percent) || o.percent < 0 || o.percent > 100) return bad(`${field}.percent`, 'must be an integer from 0 to 100');
    [numerator, denominator] = [o.percent, 100];
  } else if (o.fraction !== undefined) {
    const fr = obj(o.fraction);
    const d = fr.denominator ?? 100;
    const n = fr.numerator;
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 1 || d > MAX_DENOMINATOR) return bad(`${field}.fraction.denominator`, `must be an integer from 1 to ${MAX_DENOMINATOR}`);
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > d) return bad(`${field}.fraction.numerator`, 'must be an integer from 0 to the denominator');
    [numerator, denominator] = [n, d];
  }
  return { value: { field, ref: ref as unknown as HTTPBackendRef, numerator, denominator } };
}

const REDIRECT_CODES = [301, 302, 303, 307, 308] as const;
type RedirectCode = (typeof REDIRECT_CODES)[number];

const bad = (field: string, problem: string) => ({ field, problem });
const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {});

function headerProblem(name: unknown, value: unknown, withValue: boolean): string | null {
  if (typeof name !== 'string' || !HEADER_NAME.test(name)) return `name ${JSON.stringify(String(name).slice(0, 100))} is not a valid header name`;
  if (RESERVED.has(name.toLowerCase())) return `header ${name} is not edited by filters`;
  if (!withValue) return null;
  if (typeof value !== 'string' || value.length > MAX_HEADER_VALUE) return `value must be a string of at most ${MAX_HEADER_VALUE} characters`;
  if (CONTROL.test(value)) return 'value has a control character (CR, LF, NUL…)';
  return null;
}

function headerEdits(v: unknown, field: string): { value: HeaderEdits } | { problem: string; field: string } {
  const o = obj(v);
  const lists = { set: o.set ?? [], add: o.add ?? [], remove: o.remove ?? [] };
  const value: { set: Array<{ name: string; value: string }>; add: Array<{ name: string; value: string }>; remove: string[] } = { set: [], add: [], remove: [] };
  for (const kind of ['set', 'add', 'remove'] as const) {
    const list = lists[kind];
    if (!Array.isArray(list) || list.length > MAX_EDITS) return bad(`${field}.${kind}`, `must be a list of at most ${MAX_EDITS}`);
    const names = new Set<string>();
    for (const [j, item] of list.entries()) {
      const name = kind === 'remove' ? item : obj(item).name;
      const problem = headerProblem(name, obj(item).value, kind !== 'remove');
      if (problem) return bad(`${field}.${kind}[${j}]`, problem);
      const lower = (name as string).toLowerCase();
      if (names.has(lower)) return bad(`${field}.${kind}[${j}]`, `header ${name as string} is listed twice`);
      names.add(lower);
      if (kind === 'remove') value.remove.push(name as string);
      else value[kind].push({ name: name as string, value: obj(item).value as string });
    }
  }
  return { value };
}

function pathReplacement(v: unknown, field: string, prefixOnly: boolean, strictPaths: boolean): { value: PathReplacement | null } | { problem: string; field: string } {
  if (v === undefined) return { value: null };
  const o = obj(v);
  const type = o.type;
  const value = type === 'ReplaceFullPath' ? o.replaceFullPath : type === 'ReplacePrefixMatch' ? o.replacePrefixMatch : undefined;
  if (type !== 'ReplaceFullPath' && type !== 'ReplacePrefixMatch') return bad(`${field}.type`, `unknown path modifier ${JSON.stringify(String(type).slice(0, 40))}`);
  if (type === 'ReplacePrefixMatch' && !prefixOnly) return bad(`${field}.type`, 'ReplacePrefixMatch needs every match of the rule to be a PathPrefix one');
  if (typeof value !== 'string') return bad(field, `${type} needs its value`);
  const problem = pathProblem(value, 'Prefix', strictPaths);
  if (problem) return bad(field, problem);
  return { value: { type, value } };
}

function hostnameProblem(h: unknown): string | null {
  if (typeof h !== 'string') return 'must be a string';
  if (h.includes('*')) return `hostname ${JSON.stringify(h.slice(0, 100))}: no wildcard`;
  return hostProblem(h.toLowerCase());
}

function redirect(v: unknown, field: string, prefixOnly: boolean, strictPaths: boolean): { value: RouteFilters['redirect'] } | { problem: string; field: string } {
  const o = obj(v);
  const scheme = o.scheme ?? '';
  if (scheme !== '' && scheme !== 'http' && scheme !== 'https') return bad(`${field}.scheme`, `scheme ${JSON.stringify(String(scheme).slice(0, 40))} is not http or https`);
  if (o.hostname !== undefined) {
    const problem = hostnameProblem(o.hostname);
    if (problem) return bad(`${field}.hostname`, problem);
  }
  const port = o.port ?? 0;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535 || (o.port !== undefined && port === 0)) return bad(`${field}.port`, 'must be a port number from 1 to 65535');
  const code = o.statusCode ?? 302;
  if (!REDIRECT_CODES.includes(code as RedirectCode)) return bad(`${field}.statusCode`, `must be one of ${REDIRECT_CODES.join(', ')}`);
  const path = pathReplacement(o.path, `${field}.path`, prefixOnly, strictPaths);
  if ('problem' in path) return path;
  return { value: { scheme: scheme as string, hostname: ((o.hostname as string | undefined) ?? '').toLowerCase(), port, path: path.value, code: code as RedirectCode } };
}

function rewrite(v: unknown, field: string, prefixOnly: boolean, strictPaths: boolean): { value: RouteFilters['rewrite'] } | { problem: string; field: string } {
  const o = obj(v);
  if (o.hostname !== undefined) {
    const problem = hostnameProblem(o.hostname);
    if (problem) return bad(`${field}.hostname`, problem);
  }
  const path = pathReplacement(o.path, `${field}.path`, prefixOnly, strictPaths);
  if ('problem' in path) return path;
  return { value: { hostname: ((o.hostname as string | undefined) ?? '').toLowerCase(), path: path.value } };
}

const CORS_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH', '*']);
const MAX_CORS_ITEMS = 64;
/** The CRD's CORSOrigin: `*`, or http(s)://host[:port] where host is `*`, or names that may start with `*.`. */
const CORS_ORIGIN = /^(?:\*|https?:\/\/(?:(?:\*\.)?(?:[A-Za-z0-9-]+\.)*[A-Za-z0-9-]+|\*)(?::[0-9]{1,5})?)$/;
/** What a `*` in an origin's host matches: one or more labels (the spec's wildcard takes any number of periods). */
const ANY_LABELS = '[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*';

/**
 * A CORS filter as lua/route_cors.lua serves it (null: no origin is allowed, nothing to add). A
 * `*` origin is answered `*`, or the request's Origin when credentials are allowed; a `*` method
 * or header list is answered with what the preflight asks when credentials are allowed.
 */
function cors(v: unknown, field: string): { value: RouteCors | null } | { problem: string; field: string } {
  const o = obj(v);
  const credentials = o.allowCredentials ?? false;
  if (typeof credentials !== 'boolean') return bad(`${field}.allowCredentials`, 'must be true or false');
  const lists: Record<'allowOrigins' | 'allowMethods' | 'allowHeaders' | 'exposeHeaders', string[]> = { allowOrigins: [], allowMethods: [], allowHeaders: [], exposeHeaders: [] };
  for (const key of Object.keys(lists) as Array<keyof typeof lists>) {
    const list = o[key] ?? [];
    const max = key === 'allowMethods' ? CORS_METHODS.size : MAX_CORS_ITEMS;
    if (!Array.isArray(list) || list.length > max) return bad(`${field}.${key}`, `must be a list of at most ${max}`);
    for (const [j, item] of list.entries()) {
      const ok = typeof item === 'string' && (key === 'allowOrigins' ? item.length <= 253 && CORS_ORIGIN.test(item) : key === 'allowMethods' ? CORS_METHODS.has(item) : HEADER_NAME.test(item));
      if (!ok) return bad(`${field}.${key}[${j}]`, `${JSON.stringify(String(item).slice(0, 100))} is not ${key === 'allowOrigins' ? 'an origin (*, or http(s)://host[:port])' : key === 'allowMethods' ? 'an HTTP method or *' : 'a header name'}`);
      lists[key].push(item as string);
    }
    if (key !== 'exposeHeaders' && list.includes('*') && list.length > 1) return bad(`${field}.${key}`, '* cannot be listed with others');
  }
  if (credentials && lists.exposeHeaders.includes('*')) return bad(`${field}.exposeHeaders`, '* cannot be used with allowCredentials (the spec forbids it)');
  const maxAge = o.maxAge ?? 5;
  if (typeof maxAge !== 'number' || !Number.isInteger(maxAge) || maxAge < 1 || maxAge > 2 ** 31 - 1) return bad(`${field}.maxAge`, 'must be a whole number of seconds from 1');
  const origins = lists.allowOrigins;
  if (origins.length === 0) return { value: null };
  const anyOrigin = origins[0] === '*';
  // With credentials a `*` origin is answered with the request's own: any non-empty Origin matches.
  const origin = anyOrigin ? (credentials ? '.' : '') : `^(?:${origins.map((x) => escapeRegex(x).replace('\\*', ANY_LABELS)).join('|')})$`;
  const headers: Array<[string, string]> = [];
  if (credentials) headers.push(['Access-Control-Allow-Credentials', 'true']);
  if (lists.allowMethods.length > 0) headers.push(['Access-Control-Allow-Methods', lists.allowMethods.join(', ')]);
  if (lists.allowHeaders.length > 0) headers.push(['Access-Control-Allow-Headers', lists.allowHeaders.join(', ')]);
  if (lists.exposeHeaders.length > 0) headers.push(['Access-Control-Expose-Headers', lists.exposeHeaders.join(', ')]);
  headers.push(['Access-Control-Max-Age', String(maxAge)]);
  const tooLong = [origin, ...headers.map((h) => h[1])].some((x) => x.length > MAX_HEADER_VALUE);
  if (tooLong) return bad(field, `the origins or a header list are longer than ${MAX_HEADER_VALUE} characters once written`);
  return {
    value: {
      origin, headers,
      ...(credentials && lists.allowMethods[0] === '*' ? { echoMethods: true as const } : {}),
      ...(credentials && lists.allowHeaders[0] === '*' ? { echoHeaders: true as const } : {}),
    },
  };
}
