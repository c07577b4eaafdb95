// Turns the text of one manifest file (multi-document YAML, JSON, `List` kinds) into the plain
// objects of kube-types, one per supported document; bad documents become ManifestErrors
// naming the file and line, and the good documents of the same file still count.
import { createHash } from 'node:crypto';
import { LineCounter, parseAllDocuments } from 'yaml';
import type { StoredKind } from '../store/events.js';
import { SERVICE_NAME_LABEL } from '../store/store.js';
import type {
  ConfigMap, EndpointSlice, Endpoints, Ingress, IngressBackend, KubeObject, ObjectMeta, Secret,
} from '../store/kube-types.js';

export interface ManifestError {
  file: string;
  /** 1-based line of the document or of the syntax error; 0 when unknown. */
  line: number;
  reason: string;
}

/** One supported object found in a file, projected but without cluster-given defaults. */
export interface ManifestObject {
  kind: StoredKind;
  /** `namespace/name`, or `name` for cluster-scoped kinds. */
  key: string;
  object: KubeObject;
  line: number;
}

export interface ParsedFile {
  objects: ManifestObject[];
  errors: ManifestError[];
  /** Documents of kinds ingress-rx does not read (`Deployment echo`), for a debug log. */
  ignored: Array<{ what: string; line: number }>;
}

/** Parsed documents by their text, so that an edit re-parses only the documents it touched. */
export type ParseCache = Map<string, ParsedFile>;

const CLUSTER_SCOPED = new Set<string>(['Namespace', 'IngressClass', 'GatewayClass']);
const GATEWAY_API_KINDS = new Set<string>(['GatewayClass', 'Gateway', 'HTTPRoute', 'ReferenceGrant', 'BackendTLSPolicy', 'ListenerSet']);
const SUPPORTED = new Set<string>(['Ingress', 'IngressClass', 'Service', 'EndpointSlice', 'Endpoints', 'Secret', 'ConfigMap', 'Namespace', ...GATEWAY_API_KINDS]);

/** The API server's limits, which a cluster enforces and a directory of manifests must too. */
export const API_LIMITS = {
  /** All annotations of an object, keys and values (apimachinery's TotalAnnotationSizeLimitB). */
  annotationBytes: 256 * 1024,
  /** One object as stored (etcd's default request limit, 1.5 MiB). */
  objectBytes: 1.5 * 1024 * 1024,
} as const;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Why the API server would refuse the object's name or namespace, or null: names are DNS-1123
 * subdomains (at most 253 characters), namespaces DNS-1123 labels (at most 63). Names reach file
 * paths, log lines and metric labels, where a cluster's objects can never bring a tab or a `/`.
 */
function badName(meta: Record<string, unknown>): string | null {
  const name = String(meta.name);
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    return `metadata.name ${JSON.stringify(name.slice(0, 80))} is not a DNS-1123 subdomain (lower-case letters, digits, "-" and ".", at most 253), as the API server requires`;
  }
  const ns = meta.namespace;
  if (ns !== undefined && ns !== '' && (typeof ns !== 'string' || ns.length > 63 || !DNS_LABEL.test(ns))) {
    return `metadata.namespace ${JSON.stringify(String(ns).slice(0, 80))} is not a DNS-1123 label (lower-case letters, digits and "-", at most 63), as the API server requires`;
  }
  return null;
}

/** Why the API server would refuse the object (too large, a name it does not allow), or null. */
export function overApiLimits(raw: Record<string, unknown>): string | null {
  const meta = isRecord(raw.metadata) ? raw.metadata : {};
  const named = badName(meta);
  if (named) return named;
  if (isRecord(meta.annotations)) {
    let bytes = 0;
    for (const [k, v] of Object.entries(meta.annotations)) bytes += Buffer.byteLength(k) + (typeof v === 'string' ? Buffer.byteLength(v) : 0);
    if (bytes > API_LIMITS.annotationBytes) return `metadata.annotations hold ${bytes} bytes; the API server allows ${API_LIMITS.annotationBytes}`;
  }
  const size = Buffer.byteLength(JSON.stringify(raw));
  if (size > API_LIMITS.objectBytes) return `the object is ${size} bytes; the API server allows ${API_LIMITS.objectBytes}`;
  return null;
}

export function isManifestFile(name: string): boolean {
  return /\.(ya?ml|json)$/i.test(name) && !name.startsWith('.');
}

/**
 * Parses one file's text. `file` is only used in errors. Documents found in `cache` (the cache
 * returned by the previous parse of the same file) are not parsed again.
 */
export function parseManifestFile(file: string, text: string, cache: ParseCache = new Map()): ParsedFile & { cache: ParseCache } {
  const out: ParsedFile = { objects: [], errors: [], ignored: [] };
  const next: ParseCache = new Map();
  for (const { chunk, offset } of splitDocuments(file, text)) {
    const parsed = next.get(chunk) ?? cache.get(chunk) ?? parseChunk(file, chunk);
    next.set(chunk, parsed);
    for (const o of parsed.objects) out.objects.push({ ...o, line: o.line + offset });
    for (const e of parsed.errors) out.errors.push({ ...e, line: e.line === 0 ? 0 : e.line + offset });
    for (const i of parsed.ignored) out.ignored.push({ ...i, line: i.line + offset });
  }
  return { ...out, cache: next };
}

// A line starting with `---` always starts a document (YAML forbids it inside content), so a
// file splits there into pieces that parse alone — the yaml library's speed (~0.3 ms per small
// document) makes re-parsing a 10,000-document file on every edit too slow.
function splitDocuments(file: string, text: string): Array<{ chunk: string; offset: number }> {
  if (/\.json$/i.test(file) || /^%/m.test(text)) return [{ chunk: text, offset: 0 }];
  const marker = /^---(?=[ \t\r\n]|$)/gm;
  const starts = [0];
  for (let m = marker.exec(text); m; m = marker.exec(text)) if (m.index > 0) starts.push(m.index);
  const pieces: Array<{ chunk: string; offset: number }> = [];
  let line = 0;
  for (let i = 0; i < starts.length; i++) {
    const chunk = text.slice(starts[i], starts[i + 1] ?? text.length);
    pieces.push({ chunk, offset: line });
    for (let j = chunk.indexOf('\n'); j !== -1; j = chunk.indexOf('\n', j + 1)) line++;
  }
  return pieces;
}

function parseChunk(file: string, text: string): ParsedFile {
  const out: ParsedFile = { objects: [], errors: [], ignored: [] };
  const fail = (line: number, reason: string) => out.errors.push({ file, line, reason });
  for (const { value, line, error } of documents(file, text)) {
    if (error) {
      fail(line, error);
      continue;
    }
    if (value === null || value === undefined) continue; // an empty document
    collect(value, line, out, fail);
  }
  return out;
}

interface RawDocument { value?: unknown; line: number; error?: string }

function documents(file: string, text: string): RawDocument[] {
  if (/\.json$/i.test(file)) {
    try {
      const value: unknown = JSON.parse(text);
      return Array.isArray(value) ? value.map((v) => ({ value: v, line: 1 })) : [{ value, line: 1 }];
    } catch (err) {
      return [{ line: jsonErrorLine(text, err as Error), error: `JSON syntax error: ${(err as Error).message}` }];
    }
  }
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [];
  return list.map((doc) => {
    const line = lineCounter.linePos(doc.contents?.range?.[0] ?? doc.range[0]).line;
    if (doc.errors.length > 0) {
      const e = doc.errors[0]!;
      const at = e.linePos?.[0]?.line ?? lineCounter.linePos(e.pos[0]).line;
      return { line: at, error: `YAML syntax error: ${firstLine(e.message)}` };
    }
    try {
      return { value: doc.toJS({ maxAliasCount: 100 }) as unknown, line };
    } catch (err) {
      return { line, error: `YAML error: ${firstLine((err as Error).message)}` };
    }
  });
}

function collect(value: unknown, line: number, out: ParsedFile, fail: (line: number, reason: string) => void): void {
  if (!isRecord(value)) return fail(line, 'document is not a mapping');
  const kind = value.kind;
  if (typeof kind !== 'string' || kind === '') return fail(line, 'document has no kind');
  if (kind.endsWith('List') && Array.isArray(value.items)) {
    for (const item of value.items) collect(item, line, out, fail);
    return;
  }
  const meta = value.metadata;
  const name = isRecord(meta) ? meta.name : undefined;
  if (typeof name !== 'string' || name === '') return fail(line, `${kind} has no metadata.name`);
  if (!SUPPORTED.has(kind)) {
    out.ignored.push({ what: `${kind} ${name}`, line });
    return;
  }
  const tooLarge = overApiLimits(value);
  if (tooLarge) return fail(line, `${kind} ${name}: ${tooLarge}; refused`);
  try {
    for (const object of project(kind, value)) {
      const objKind = (object.kind ?? kind) as StoredKind;
      const ns = object.metadata.namespace;
      out.objects.push({ kind: objKind, key: ns ? `${ns}/${object.metadata.name}` : object.metadata.name, object, line });
    }
  } catch (err) {
    fail(line, `${kind} ${name}: ${(err as Error).message}`);
  }
}

// ---- Projection into kube-types. Parsed values are fresh and owned here: used without copying.

function project(kind: string, raw: Record<string, unknown>): KubeObject[] {
  const metadata = projectMeta(raw.metadata as Record<string, unknown>, !CLUSTER_SCOPED.has(kind));
  const base = { apiVersion: str(raw.apiVersion, 'apiVersion'), kind, metadata };
  switch (kind) {
    case 'Ingress': return [projectIngress(base, raw)];
    case 'IngressClass': return [{ ...base, spec: record(raw.spec, 'spec') ?? {} } as KubeObject];
    case 'Service': return [{ ...base, spec: record(raw.spec, 'spec') ?? {}, ...optional('status', record(raw.status, 'status')) } as KubeObject];
    case 'EndpointSlice': return [projectSlice(base, raw)];
    case 'Endpoints': return endpointsToSlices({ ...base, subsets: array(raw.subsets, 'subsets') as Endpoints['subsets'] });
    case 'Secret': return [projectSecret(base, raw)];
    case 'ConfigMap': return [{ ...base, ...optional('data', stringMap(raw.data, 'data')) } as ConfigMap];
    case 'Namespace': return [{ ...base, ...optional('status', record(raw.status, 'status')) } as KubeObject];
    case 'GatewayClass': case 'Gateway': case 'HTTPRoute': case 'ReferenceGrant': case 'BackendTLSPolicy': case 'ListenerSet': return [projectGatewayAPI(base, raw)];
    default: throw new Error(`unsupported kind ${kind}`);
  }
}

/** A Gateway API object: `spec` a mapping (required, as the CRDs say), of the gateway.networking.k8s.io group. */
function projectGatewayAPI(base: KubeObject, raw: Record<string, unknown>): KubeObject {
  if (!base.apiVersion?.startsWith('gateway.networking.k8s.io/')) throw new Error(`apiVersion ${JSON.stringify(base.apiVersion ?? '')} is not gateway.networking.k8s.io`);
  const spec = record(raw.spec, 'spec');
  if (!spec) throw new Error('spec is required');
  if (base.kind === 'Gateway' || base.kind === 'ListenerSet') array(spec.listeners, 'spec.listeners');
  if (base.kind === 'ListenerSet' && !record(spec.parentRef, 'spec.parentRef')) throw new Error('spec.parentRef is required');
  if (base.kind === 'HTTPRoute') {
    array(spec.parentRefs, 'spec.parentRefs');
    array(spec.hostnames, 'spec.hostnames');
    array(spec.rules, 'spec.rules');
  }
  if (base.kind === 'BackendTLSPolicy') {
    array(spec.targetRefs, 'spec.targetRefs');
    record(spec.validation, 'spec.validation');
  }
  if (base.kind === 'ReferenceGrant') {
    array(spec.from, 'spec.from');
    array(spec.to, 'spec.to');
  }
  return { ...base, spec, ...optional('status', record(raw.status, 'status')) } as KubeObject;
}

function projectMeta(m: Record<string, unknown>, namespaced: boolean): ObjectMeta {
  const meta: ObjectMeta = { name: m.name as string };
  if (namespaced) meta.namespace = str(m.namespace, 'metadata.namespace') || 'default';
  const copy = <K extends keyof ObjectMeta>(k: K, v: ObjectMeta[K] | undefined) => { if (v !== undefined) meta[k] = v; };
  copy('uid', str(m.uid, 'metadata.uid'));
  copy('resourceVersion', m.resourceVersion === undefined ? undefined : String(m.resourceVersion));
  copy('generation', typeof m.generation === 'number' ? m.generation : undefined);
  copy('creationTimestamp', timestamp(m.creationTimestamp, 'metadata.creationTimestamp'));
  copy('deletionTimestamp', timestamp(m.deletionTimestamp, 'metadata.deletionTimestamp'));
  copy('labels', stringMap(m.labels, 'metadata.labels'));
  copy('annotations', stringMap(m.annotations, 'metadata.annotations'));
  copy('ownerReferences', array(m.ownerReferences, 'metadata.ownerReferences') as ObjectMeta['ownerReferences']);
  return meta;
}

function projectIngress(base: KubeObject, raw: Record<string, unknown>): Ingress {
  const spec = record(raw.spec, 'spec') ?? {};
  const rules = array(spec.rules, 'spec.rules');
  rules?.forEach((r, i) => {
    const rule = record(r, `spec.rules[${i}]`);
    const http = rule && record(rule.http, `spec.rules[${i}].http`);
    if (http) array(http.paths, `spec.rules[${i}].http.paths`);
  });
  array(spec.tls, 'spec.tls');
  const ing = { ...base, spec, ...optional('status', record(raw.status, 'status')) } as Ingress;
  upgradeBackends(ing);
  return ing;
}

// extensions/v1beta1 style backends (serviceName/servicePort) become networking/v1 ones.
function upgradeBackends(ing: Ingress): void {
  const upgrade = (b: IngressBackend | undefined): void => {
    const legacy = b as (IngressBackend & { serviceName?: string; servicePort?: string | number }) | undefined;
    if (!legacy || legacy.service || legacy.serviceName === undefined) return;
    const port = legacy.servicePort;
    legacy.service = {
      name: String(legacy.serviceName),
      port: typeof port === 'number' || /^\d+$/.test(String(port)) ? { number: Number(port) } : { name: String(port ?? '') },
    };
    delete legacy.serviceName;
    delete legacy.servicePort;
  };
  upgrade(ing.spec.defaultBackend ?? (ing.spec as { backend?: IngressBackend }).backend);
  const legacyDefault = (ing.spec as { backend?: IngressBackend }).backend;
  if (legacyDefault && !ing.spec.defaultBackend) {
    ing.spec.defaultBackend = legacyDefault;
    delete (ing.spec as { backend?: IngressBackend }).backend;
  }
  for (const rule of ing.spec.rules ?? []) for (const p of rule.http?.paths ?? []) upgrade(p.backend);
}

function projectSlice(base: KubeObject, raw: Record<string, unknown>): EndpointSlice {
  const addressType = raw.addressType ?? 'IPv4';
  if (addressType !== 'IPv4' && addressType !== 'IPv6' && addressType !== 'FQDN') {
    throw new Error(`addressType "${String(addressType)}" is not IPv4, IPv6 or FQDN`);
  }
  const endpoints = array(raw.endpoints, 'endpoints');
  endpoints?.forEach((e, i) => {
    const ep = record(e, `endpoints[${i}]`);
    if (!ep || !Array.isArray(ep.addresses)) throw new Error(`endpoints[${i}].addresses must be a list`);
  });
  return {
    ...base,
    addressType,
    ...optional('endpoints', endpoints as EndpointSlice['endpoints']),
    ...optional('ports', array(raw.ports, 'ports') as EndpointSlice['ports']),
  };
}

/** core/v1 Endpoints → EndpointSlices, one per subset and address family. */
export function endpointsToSlices(ep: Endpoints): EndpointSlice[] {
  const meta = ep.metadata;
  const groups: Array<Pick<EndpointSlice, 'addressType' | 'endpoints' | 'ports'>> = [];
  for (const subset of ep.subsets ?? []) {
    const byFamily = new Map<'IPv4' | 'IPv6', NonNullable<EndpointSlice['endpoints']>>();
    const add = (ip: string, ready: boolean, nodeName?: string) => {
      const family = ip.includes(':') ? 'IPv6' : 'IPv4';
      if (!byFamily.has(family)) byFamily.set(family, []);
      byFamily.get(family)!.push({ addresses: [ip], conditions: { ready }, ...optional('nodeName', nodeName) });
    };
    for (const a of subset.addresses ?? []) add(String(a.ip), true, a.nodeName);
    for (const a of subset.notReadyAddresses ?? []) add(String(a.ip), false);
    const ports = (subset.ports ?? []).map((p) => ({ ...optional('name', p.name), port: p.port, protocol: p.protocol ?? 'TCP' }));
    if (byFamily.size === 0) groups.push({ addressType: 'IPv4', endpoints: [], ports });
    for (const [addressType, endpoints] of byFamily) groups.push({ addressType, endpoints, ports });
  }
  if (groups.length === 0) groups.push({ addressType: 'IPv4', endpoints: [], ports: [] });
  return groups.map((g, i) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      ...meta,
      name: groups.length === 1 ? meta.name : `${meta.name}-${i}`,
      labels: { ...(meta.labels ?? {}), [SERVICE_NAME_LABEL]: meta.name },
    },
    ...g,
  }));
}

function projectSecret(base: KubeObject, raw: Record<string, unknown>): Secret {
  const data = { ...(stringMap(raw.data, 'data') ?? {}) };
  for (const [k, v] of Object.entries(stringMap(raw.stringData, 'stringData') ?? {})) {
    data[k] = Buffer.from(v, 'utf8').toString('base64');
  }
  return { ...base, type: str(raw.type, 'type') ?? 'Opaque', data };
}

// ---- Field checks: a wrong type names the field

function str(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new Error(`${field} must be a string`);
  return v;
}

function record(v: unknown, field: string): Record<string, unknown> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) throw new Error(`${field} must be a mapping`);
  return v;
}

function array(v: unknown, field: string): unknown[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new Error(`${field} must be a list`);
  return v;
}

// Labels, annotations and data are strings in the API; an unquoted YAML `true` or `80` is
// taken as the string it reads as rather than rejecting the whole object.
function stringMap(v: unknown, field: string): Record<string, string> | undefined {
  const r = record(v, field);
  if (!r) return undefined;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(r)) {
    if (val === null || val === undefined) out[k] = '';
    else if (typeof val === 'string') out[k] = val;
    else if (typeof val === 'number' || typeof val === 'boolean') out[k] = String(val);
    else throw new Error(`${field}.${k} must be a string`);
  }
  return out;
}

function timestamp(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  const t = v instanceof Date ? v.getTime() : typeof v === 'string' ? Date.parse(v) : NaN;
  if (Number.isNaN(t)) throw new Error(`${field} is not an RFC 3339 time`);
  return new Date(t).toISOString().replace(/\.000Z$/, 'Z');
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function firstLine(s: string): string {
  return s.split('\n')[0] ?? s;
}

function jsonErrorLine(text: string, err: Error): number {
  const m = /position (\d+)/.exec(err.message);
  if (!m) return 0;
  return text.slice(0, Number(m[1])).split('\n').length;
}

/** A stable uid, as a cluster would give, from what identifies the object. */
export function stableUid(kind: string, key: string): string {
  const h = createHash('sha1').update(`${kind}/${key}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
