// The scale generator: N Ingresses (one host, two paths, their own Service and a three-endpoint
// EndpointSlice each; 10% TLS with one shared certificate; a mix of core annotations) as
// SourceEvents, as manifest files, or as a recorded NDJSON event log with an endpoint storm.
//   node --import tsx bench/gen.ts --n 1000 --manifests DIR [--files 4]
//   node --import tsx bench/gen.ts --n 1000 --log FILE [--storm 20000 --storm-rate 100]
//   node --import tsx bench/gen.ts --n 1000 --events FILE [--as-listed]   (a JSON array of SourceEvents: bench/rss-child.mjs)
//   --as-listed: each object as a real API server lists it (asListed below)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, createWriteStream } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SourceEvent, ResourceKind, StoredKind } from '../src/store/events.js';
import type { EndpointSlice, Ingress, KubeObject, Secret, Service } from '../src/store/kube-types.js';
import { defaultStoreOptions, DEFAULT_ANNOTATIONS_PREFIX } from '../src/store/store.js';
import { RECORD_FORMAT, RECORD_FORMAT_VERSION, type RecordHeader } from '../src/streams/record.js';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CACHE_DIR = join(REPO_ROOT, '.bench');
export const BENCH_DOMAIN = 'bench.example';
const A = DEFAULT_ANNOTATIONS_PREFIX;

export interface Endpoint { address: string; port: number }

export interface GenOptions {
  n: number;
  /** Fraction of Ingresses with TLS (default 0.1). */
  tlsFraction?: number;
  /** Endpoints of the Service of Ingress i (default three addresses in 10.0.0.0/8 on port 8080). */
  endpoints?: (i: number) => Endpoint[];
  /** Namespaces the Ingresses are spread over (default 10). */
  namespaces?: number;
  /** Leave the annotation mix out (plain Ingresses, for the per-Ingress conf size). */
  plain?: boolean;
  /** Each object as a real API server lists it (asListed). */
  asListed?: boolean;
}

export interface BenchCert { cert: string; key: string }

/** One self-signed wildcard certificate for *.bench.example, generated once and cached. */
export function benchCertificate(): BenchCert {
  const certPath = join(CACHE_DIR, 'bench-tls.crt');
  const keyPath = join(CACHE_DIR, 'bench-tls.key');
  if (!existsSync(certPath) || !existsSync(keyPath)) {
    mkdirSync(CACHE_DIR, { recursive: true });
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', keyPath, '-out', certPath, '-days', '3650', '-subj', `/CN=*.${BENCH_DOMAIN}`,
      '-addext', `subjectAltName=DNS:*.${BENCH_DOMAIN},DNS:${BENCH_DOMAIN}`,
    ], { stdio: 'ignore' });
  }
  return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
}

export const hostOf = (i: number) => `app-${i}.${BENCH_DOMAIN}`;
/** A canary lives in its primary's namespace, with its own Service. */
export const namespaceOf = (i: number, o: Pick<GenOptions, 'namespaces' | 'plain'> = {}) =>
  `bench-${(isCanary(i, o.plain) ? i - 1 : i) % (o.namespaces ?? 10)}`;
export const serviceOf = (i: number) => `svc-${i}`;
const TLS_SECRET = 'bench-tls';

function defaultEndpoints(i: number): Endpoint[] {
  return [0, 1, 2].map((k) => ({ address: `10.${(i >> 8) & 255}.${i & 255}.${10 + k}`, port: 8080 }));
}

/** Deterministic PRNG (mulberry32), so every run generates the same cluster. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// As the API server writes metav1.Time (seconds, no fraction): a list hands it to client-node as a
// Date, which the kube source writes back so; a watch hands the string as it is. With `.000Z` the
// two copies of one object would differ, and every first watch event after the list (the status
// writes) would look like a change.
const created = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString().replace(/\.000Z$/, 'Z');

function annotationsOf(i: number): Record<string, string> {
  const a: Record<string, string> = {};
  if (i % 2 === 0) a[`${A}/rewrite-target`] = '/';
  if (i % 3 === 0) a[`${A}/proxy-body-size`] = '8m';
  if (i % 4 === 0) { a[`${A}/proxy-read-timeout`] = '30'; a[`${A}/proxy-connect-timeout`] = '5'; }
  if (i % 5 === 0) a[`${A}/enable-cors`] = 'true';
  if (i % 10 === 3) { a[`${A}/affinity`] = 'cookie'; a[`${A}/session-cookie-name`] = 'route'; }
  if (i % 10 === 7) a[`${A}/whitelist-source-range`] = '10.0.0.0/8,192.168.0.0/16';
  return a;
}

/** Whether Ingress i is a canary of Ingress i-1 (same host, weighted). */
export const isCanary = (i: number, plain = false) => !plain && i % 20 === 19;

export function serviceObject(i: number, o: GenOptions = { n: 0 }): Service {
  return {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: serviceOf(i), namespace: namespaceOf(i, o), uid: `svc-uid-${i}`, resourceVersion: '1', creationTimestamp: created(i) },
    spec: { type: 'ClusterIP', clusterIP: `172.20.${(i >> 8) & 255}.${i & 255}`, ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
  };
}

export function sliceObject(i: number, endpoints: Endpoint[], o: GenOptions = { n: 0 }, version = 1): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
    metadata: {
      name: `${serviceOf(i)}-abcde`, namespace: namespaceOf(i, o), uid: `slice-uid-${i}`,
      resourceVersion: String(version), labels: { 'kubernetes.io/service-name': serviceOf(i) },
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: endpoints[0]?.port ?? 8080, protocol: 'TCP' }],
    endpoints: endpoints.map((e) => ({ addresses: [e.address], conditions: { ready: true } })),
  };
}

export function ingressObject(i: number, o: GenOptions = { n: 0 }, version = 1): Ingress {
  const canary = isCanary(i, o.plain);
  const hostIndex = canary ? i - 1 : i;
  const annotations = o.plain ? {} : annotationsOf(i);
  if (canary) { annotations[`${A}/canary`] = 'true'; annotations[`${A}/canary-weight`] = '20'; }
  const tls = !canary && tlsOn(hostIndex, o);
  const backend = { service: { name: serviceOf(i), port: { number: 80 } } };
  return {
    apiVersion: 'networking.k8s.io/v1', kind: 'Ingress',
    metadata: {
      name: `ing-${i}`, namespace: namespaceOf(i, o), uid: `ing-uid-${i}`, resourceVersion: String(version),
      generation: version, creationTimestamp: created(i), annotations,
    },
    spec: {
      ingressClassName: 'nginx',
      ...(tls ? { tls: [{ hosts: [hostOf(hostIndex)], secretName: TLS_SECRET }] } : {}),
      rules: [{
        host: hostOf(hostIndex),
        http: { paths: [{ path: '/', pathType: 'Prefix', backend }, { path: '/api', pathType: 'Prefix', backend }] },
      }],
    },
  };
}

function tlsOn(i: number, o: GenOptions): boolean {
  const f = o.tlsFraction ?? 0.1;
  return f > 0 && i % Math.round(1 / f) === 1;
}

const ev = (kind: ResourceKind, object: KubeObject): SourceEvent => ({
  kind, type: 'add', object, key: `${object.metadata.namespace}/${object.metadata.name}`,
});

/** The cluster as `add` events: IngressClass, TLS Secrets, Services, EndpointSlices, then Ingresses. */
export function generateEvents(o: GenOptions): SourceEvent[] {
  const out: SourceEvent[] = [{
    kind: 'IngressClass', type: 'add', key: 'nginx',
    object: { apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } } as KubeObject,
  }];
  const endpoints = o.endpoints ?? defaultEndpoints;
  const tlsNamespaces = new Set<string>();
  for (let i = 0; i < o.n; i++) if (!isCanary(i, o.plain) && tlsOn(i, o)) tlsNamespaces.add(namespaceOf(i, o));
  if (tlsNamespaces.size > 0) {
    const { cert, key } = benchCertificate();
    for (const ns of tlsNamespaces) {
      const secret: Secret = {
        apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls',
        metadata: { name: TLS_SECRET, namespace: ns, uid: `secret-uid-${ns}`, resourceVersion: '1' },
        data: { 'tls.crt': Buffer.from(cert).toString('base64'), 'tls.key': Buffer.from(key).toString('base64') },
      };
      out.push(ev('Secret', secret));
    }
  }
  for (let i = 0; i < o.n; i++) out.push(ev('Service', serviceObject(i, o)));
  for (let i = 0; i < o.n; i++) out.push(ev('EndpointSlice', sliceObject(i, endpoints(i), o)));
  for (let i = 0; i < o.n; i++) out.push(ev('Ingress', ingressObject(i, o)));
  if (o.asListed) for (const e of out) e.object = asListed(e.kind, e.object);
  return out;
}

// ---- Objects as a real cluster lists them: what the API server, its controllers and
// `kubectl apply` (or Helm) add to the manifests the generator writes.

const APPLIED_AT = '2026-01-01T00:00:00Z';

/** A UUID-shaped uid, deterministic per name. */
function uidOf(seed: string): string {
  let h = 2166136261;
  for (const c of seed) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  const hex = (n: number) => (Math.imul(h, n) >>> 0).toString(16).padStart(8, '0');
  return `${hex(1)}-${hex(3).slice(0, 4)}-4${hex(5).slice(0, 3)}-a${hex(7).slice(0, 3)}-${hex(11)}${hex(13).slice(0, 4)}`;
}

/** The fieldsV1 set a field manager owns: every field of `value`, keyed as the API server keys them. */
function fieldsOf(value: unknown): unknown {
  if (Array.isArray(value)) {
    const out: Record<string, unknown> = {};
    for (const item of value) {
      if (item === null || typeof item !== 'object') { out[`v:${JSON.stringify(item)}`] = {}; continue; }
      const rec = item as Record<string, unknown>;
      const key = 'name' in rec ? { name: rec.name } : 'port' in rec ? { port: rec.port, protocol: rec.protocol ?? 'TCP' } : { addresses: rec.addresses ?? rec.host ?? rec.path };
      out[`k:${JSON.stringify(key)}`] = { '.': {}, ...(fieldsOf(rec) as object) };
    }
    return out;
  }
  if (value === null || typeof value !== 'object') return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[`f:${k}`] = v !== null && typeof v === 'object' ? { ...(Array.isArray(v) ? {} : { '.': {} }), ...(fieldsOf(v) as object) } : {};
  return out;
}

function managedField(manager: string, operation: 'Apply' | 'Update', apiVersion: string, fields: Record<string, unknown>, subresource?: string) {
  return { manager, operation, apiVersion, time: APPLIED_AT, fieldsType: 'FieldsV1', fieldsV1: fieldsOf(fields), ...(subresource ? { subresource } : {}) };
}

const helmLabels = (app: string) => ({
  'app.kubernetes.io/name': app, 'app.kubernetes.io/instance': `${app}-prod`, 'app.kubernetes.io/managed-by': 'Helm',
  'app.kubernetes.io/version': '1.4.2', 'helm.sh/chart': `${app}-0.7.3`,
});

/**
 * `obj` as a cluster lists it. Applied objects (Ingress, Service, Secret) carry Helm's labels, its
 * release annotations and kubectl's last-applied-configuration (the applied manifest); every object
 * carries managedFields. A Service gets the fields the API server defaults; an EndpointSlice is the
 * EndpointSlice controller's (the Service's labels copied, an owner, per-endpoint Pod, node and zone).
 */
export function asListed(kind: StoredKind, obj: KubeObject): KubeObject {
  const { metadata: m } = obj;
  const app = m.name.replace(/-abcde$/, '').replace(/^(ing|svc)-/, 'app-');
  const apiVersion = obj.apiVersion ?? 'v1';
  const meta = { ...m, uid: uidOf(`${kind}/${m.namespace}/${m.name}`), resourceVersion: String(48_211_000 + (m.name.length * 7919) % 99_999), creationTimestamp: m.creationTimestamp ?? APPLIED_AT };
  if (kind === 'EndpointSlice') {
    const slice = obj as EndpointSlice;
    const svc = m.labels?.['kubernetes.io/service-name'] ?? '';
    const body = {
      addressType: slice.addressType,
      endpoints: (slice.endpoints ?? []).map((e, k) => ({
        addresses: e.addresses, conditions: { ready: true, serving: true, terminating: false },
        nodeName: `ip-10-0-${k}-${17 + k}.eu-west-1.compute.internal`,
        targetRef: { kind: 'Pod', namespace: m.namespace, name: `${app}-7d9f8b6c5d-${'xk2lq'.slice(k)}${k}`, uid: uidOf(`pod/${m.namespace}/${app}/${k}`) },
        zone: `eu-west-1${'abc'[k % 3]}`,
      })),
      ports: slice.ports,
    };
    const labels = { ...helmLabels(app), 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io', 'kubernetes.io/service-name': svc };
    const metadata = {
      ...meta, generateName: `${svc}-`, generation: 1, labels,
      annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': APPLIED_AT },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: svc, uid: uidOf(`Service/${m.namespace}/${svc}`), controller: true, blockOwnerDeletion: true }],
    };
    return {
      apiVersion, kind, ...body,
      metadata: { ...metadata, managedFields: [managedField('endpointslice-controller', 'Update', apiVersion, { metadata: { generateName: 1, labels, annotations: metadata.annotations, ownerReferences: metadata.ownerReferences }, ...body })] },
    } as KubeObject;
  }
  const labels = { ...helmLabels(app), ...(m.labels ?? {}) };
  const annotations = { 'meta.helm.sh/release-name': `${app}-prod`, 'meta.helm.sh/release-namespace': m.namespace ?? '', ...(m.annotations ?? {}) };
  let listed: Record<string, unknown> = { ...obj };
  if (kind === 'Service') {
    const spec = (obj as Service).spec;
    listed.spec = {
      ...spec, clusterIPs: [spec.clusterIP], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster',
      sessionAffinity: 'None', selector: { 'app.kubernetes.io/name': app, 'app.kubernetes.io/instance': `${app}-prod` },
    };
    listed.status = { loadBalancer: {} };
  }
  if (kind === 'Ingress') listed.status = { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } };
  const { status: _status, ...applied } = { ...listed, metadata: { name: m.name, namespace: m.namespace, labels, annotations } } as Record<string, unknown>;
  const withApplied = { ...annotations, 'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(applied)}\n` };
  const managedFields = [managedField('kubectl-client-side-apply', 'Update', apiVersion, { ...applied, metadata: { labels, annotations: withApplied } })];
  if (kind === 'Ingress') managedFields.push(managedField('nginx-ingress-controller', 'Update', apiVersion, { status: listed.status }, 'status'));
  return { ...listed, metadata: { ...meta, labels, annotations: withApplied, managedFields } } as KubeObject;
}

/**
 * `count` EndpointSlice updates, each moving one endpoint of a random Service to a new address
 * (versions keep increasing per slice), as a storm after the initial cluster.
 */
export function endpointStorm(o: GenOptions, count: number, seed = 42): SourceEvent[] {
  const rand = prng(seed);
  const endpoints = o.endpoints ?? defaultEndpoints;
  const current = new Map<number, { eps: Endpoint[]; version: number }>();
  const out: SourceEvent[] = [];
  for (let k = 0; k < count; k++) {
    const i = Math.floor(rand() * o.n);
    const state = current.get(i) ?? { eps: endpoints(i), version: 1 };
    const eps = [...state.eps];
    const slot = Math.floor(rand() * eps.length);
    eps[slot] = { address: `10.${128 + ((k >> 16) & 127)}.${(k >> 8) & 255}.${k & 255}`, port: eps[slot]!.port };
    const next = { eps, version: state.version + 1 };
    current.set(i, next);
    const object = sliceObject(i, eps, o, next.version);
    out.push({ kind: 'EndpointSlice', type: 'update', key: `${object.metadata.namespace}/${object.metadata.name}`, object });
  }
  return out;
}

/** Writes the cluster as JSON `List` manifests split over `files` files; returns the paths. */
export function writeManifests(dir: string, o: GenOptions, files = 1): string[] {
  mkdirSync(dir, { recursive: true });
  const events = generateEvents(o);
  const paths: string[] = [];
  const per = Math.ceil(events.length / files);
  for (let f = 0; f < files; f++) {
    const items = events.slice(f * per, (f + 1) * per).map((e) => e.object);
    const p = join(dir, `bench-${String(f).padStart(3, '0')}.json`);
    writeFileSync(p, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    paths.push(p);
  }
  return paths;
}

export interface LogOptions {
  /** Endpoint updates after the initial cluster. */
  storm?: number;
  /** Storm events per second of log time (default 100). */
  stormRate?: number;
  syncRateLimit?: number;
}

/** The header a local run with default flags would record (local mode watches Ingresses without class). */
export function recordHeader(o: LogOptions = {}): RecordHeader {
  return {
    format: RECORD_FORMAT, version: RECORD_FORMAT_VERSION, ingressRx: 'bench', startedAt: '2026-11-22T00:00:00.000Z',
    store: { ...defaultStoreOptions(), watchIngressWithoutClass: true },
    syncRateLimit: o.syncRateLimit ?? 0.3, ringCapacity: 1024, burst: 1,
    annotationsPrefix: DEFAULT_ANNOTATIONS_PREFIX, defaultServerPort: 8181, secretsRedacted: false,
  };
}

/** Writes a record-format NDJSON log: the cluster at t=0, then the storm. Returns the event count. */
export async function writeEventLog(file: string, o: GenOptions, l: LogOptions = {}): Promise<number> {
  mkdirSync(dirname(file), { recursive: true });
  const out = createWriteStream(file);
  const write = (line: string) => new Promise<void>((resolve) => { if (out.write(`${line}\n`)) resolve(); else out.once('drain', resolve); });
  await write(JSON.stringify(recordHeader(l)));
  let count = 0;
  for (const e of generateEvents(o)) { await write(JSON.stringify({ t: 0, kind: e.kind, type: e.type, key: e.key, object: e.object })); count++; }
  const rate = l.stormRate ?? 100;
  const storm = endpointStorm(o, l.storm ?? 0);
  for (let k = 0; k < storm.length; k++) {
    const e = storm[k]!;
    await write(JSON.stringify({ t: Math.round(1000 + (k * 1000) / rate), kind: e.kind, type: e.type, key: e.key, object: e.object }));
    count++;
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return count;
}

function arg(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

async function main(argv: string[]): Promise<void> {
  const n = Number(arg(argv, '--n') ?? 1000);
  const manifests = arg(argv, '--manifests');
  const log = arg(argv, '--log');
  const events = arg(argv, '--events');
  if (!manifests && !log && !events) {
    process.stderr.write('usage: bench/gen.ts --n N (--manifests DIR [--files K] | --log FILE [--storm M] [--storm-rate R] | --events FILE)\n');
    process.exitCode = 2;
    return;
  }
  if (manifests) {
    const paths = writeManifests(manifests, { n }, Number(arg(argv, '--files') ?? 1));
    process.stdout.write(`wrote ${n} Ingresses to ${paths.length} file(s) in ${manifests}\n`);
  }
  if (log) {
    const count = await writeEventLog(log, { n }, { storm: Number(arg(argv, '--storm') ?? 0), stormRate: Number(arg(argv, '--storm-rate') ?? 100) });
    process.stdout.write(`wrote ${count} events to ${log}\n`);
  }
  if (events) {
    const asListed = argv.includes('--as-listed');
    writeFileSync(events, JSON.stringify(generateEvents({ n, asListed })));
    process.stdout.write(`wrote the events of ${n} Ingresses${asListed ? ' as a cluster lists them' : ''} to ${events}\n`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main(process.argv.slice(2));
