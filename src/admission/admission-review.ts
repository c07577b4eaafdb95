// admission.k8s.io/v1 AdmissionReview on the wire: reading a request (every field checked, since
// the webhook port takes requests from anyone who reaches it) and writing the response.
import type { Gateway, HTTPRoute, Ingress, ObjectMeta } from '../store/kube-types.js';
import type { Finding, GatewayAPIObject } from './review-types.js';

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  name: string;
  namespace: string;
  object: unknown;
  dryRun: boolean;
}

export type ReadReview = { ok: true; request: AdmissionRequest } | { ok: false; message: string };

export interface AdmissionResponse {
  allowed: boolean;
  /** HTTP-like code and message of a denial. */
  code?: number;
  message?: string;
  warnings?: string[];
}

const OPERATIONS = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

/** A review body → its request, or why it is not an admission.k8s.io/v1 AdmissionReview. */
export function readAdmissionReview(body: string): ReadReview {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (err) {
    return { ok: false, message: `body is not JSON: ${(err as Error).message}` };
  }
  if (!isRecord(doc)) return { ok: false, message: 'body is not a JSON object' };
  if (doc.apiVersion !== 'admission.k8s.io/v1' || doc.kind !== 'AdmissionReview') {
    return { ok: false, message: 'expected apiVersion admission.k8s.io/v1, kind AdmissionReview (admissionReviewVersions: [v1])' };
  }
  const r = doc.request;
  if (!isRecord(r)) return { ok: false, message: 'request is missing' };
  if (typeof r.uid !== 'string' || r.uid === '' || r.uid.length > 128) return { ok: false, message: 'request.uid must be a non-empty string' };
  const kind = r.kind;
  if (!isRecord(kind) || typeof kind.group !== 'string' || typeof kind.version !== 'string' || typeof kind.kind !== 'string') {
    return { ok: false, message: 'request.kind must be {group, version, kind}' };
  }
  if (typeof r.operation !== 'string' || !OPERATIONS.has(r.operation)) return { ok: false, message: 'request.operation must be CREATE, UPDATE, DELETE or CONNECT' };
  for (const f of ['name', 'namespace'] as const) {
    if (r[f] !== undefined && typeof r[f] !== 'string') return { ok: false, message: `request.${f} must be a string` };
  }
  if (r.dryRun !== undefined && typeof r.dryRun !== 'boolean') return { ok: false, message: 'request.dryRun must be a boolean' };
  return {
    ok: true,
    request: {
      uid: r.uid, kind: { group: kind.group, version: kind.version, kind: kind.kind },
      operation: r.operation as AdmissionRequest['operation'],
      name: (r.name as string | undefined) ?? '', namespace: (r.namespace as string | undefined) ?? '',
      object: r.object ?? null, dryRun: (r.dryRun as boolean | undefined) ?? false,
    },
  };
}

export function admissionReviewResponse(uid: string, r: AdmissionResponse): string {
  const response: Record<string, unknown> = { uid, allowed: r.allowed };
  if (!r.allowed) {
    response.status = { status: 'Failure', code: r.code ?? 400, reason: r.code === 403 ? 'Forbidden' : 'BadRequest', message: r.message ?? '' };
  }
  if (r.warnings && r.warnings.length > 0) response.warnings = r.warnings;
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response });
}

// ---- The Ingress in request.object

/** The API's limit on all annotations of one object together (keys and values). */
export const MAX_ANNOTATIONS_BYTES = 256 * 1024;
/**
 * The largest object the API server could send: it takes request bodies of at most 3 MiB, and
 * stores objects of at most 1.5 MiB (in etcd's encoding, which JSON only makes larger).
 */
export const MAX_OBJECT_BYTES = 3 * 1024 * 1024;

/** A DNS-1123 subdomain (a name) and label (a namespace): the API server refuses anything else. */
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The request's object as an Ingress holding only the fields the model reads, each of its type,
 * or what is wrong with it. The API server only ever sends valid Ingresses; anything else is a
 * caller that is not the API server, and gets a denial naming the field.
 */
export function ingressOf(req: AdmissionRequest, bodyBytes = 0): { ok: true; ingress: Ingress } | { ok: false; message: string } {
  const read = objectOf(req, INGRESS, 'an Ingress', bodyBytes);
  if (!read.ok) return read;
  const { metadata, spec } = read.object as unknown as Ingress;
  return { ok: true, ingress: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata, spec: spec ?? {} } };
}

/** The request's object as an HTTPRoute or a Gateway holding only the fields the model reads, or what is wrong with it (as ingressOf). */
export function gatewayObjectOf(req: AdmissionRequest, kind: 'HTTPRoute' | 'Gateway', bodyBytes = 0): { ok: true; value: GatewayAPIObject } | { ok: false; message: string } {
  const read = objectOf(req, kind === 'HTTPRoute' ? HTTP_ROUTE : GATEWAY, `a ${kind}`, bodyBytes);
  if (!read.ok) return read;
  const o = read.object as { metadata: ObjectMeta; spec?: Record<string, unknown> };
  if (kind === 'Gateway' && typeof o.spec?.gatewayClassName !== 'string') return { ok: false, message: 'request.object.spec.gatewayClassName is missing' };
  const object = { apiVersion: 'gateway.networking.k8s.io/v1', kind, metadata: o.metadata, spec: o.spec ?? {} };
  return { ok: true, value: kind === 'HTTPRoute' ? { kind, object: object as HTTPRoute } : { kind, object: object as unknown as Gateway } };
}

/** The object projected on `shape`, its annotations within the API's limit, its name and namespace filled and valid. */
function objectOf(req: AdmissionRequest, shape: Shape, what: string, bodyBytes: number): { ok: true; object: { metadata: ObjectMeta } & Record<string, unknown> } | { ok: false; message: string } {
  const o = req.object;
  if (!isRecord(o)) return { ok: false, message: `request.object must be ${what} object, not ${o === null ? 'null' : Array.isArray(o) ? 'a list' : typeof o}` };
  // Only a body that large can hold an object that large: the common case costs nothing.
  if (bodyBytes > MAX_OBJECT_BYTES) {
    const size = Buffer.byteLength(JSON.stringify(o));
    if (size > MAX_OBJECT_BYTES) return { ok: false, message: `request.object is ${size} bytes; the API server never sends an object over ${MAX_OBJECT_BYTES} bytes` };
  }
  const read = project(o, shape, 'request.object');
  if ('problem' in read) return { ok: false, message: read.problem };
  const object = read.value as { metadata: ObjectMeta } & Record<string, unknown>;
  const annotations = object.metadata.annotations ?? {};
  const size = Object.entries(annotations).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
  if (size > MAX_ANNOTATIONS_BYTES) return { ok: false, message: `request.object.metadata.annotations: ${size} bytes, more than the API allows (${MAX_ANNOTATIONS_BYTES})` };
  // The API server fills namespace and name before validating admission; a hand-made review may not.
  const metadata = { ...object.metadata, name: object.metadata.name || req.name, namespace: object.metadata.namespace || req.namespace };
  if (!metadata.name) return { ok: false, message: 'request.object.metadata.name is missing' };
  if (!metadata.namespace) return { ok: false, message: 'request.object.metadata.namespace is missing' };
  if (!NAME.test(metadata.name)) return { ok: false, message: `request.object.metadata.name ${JSON.stringify(metadata.name.slice(0, 80))} is not a name the API server accepts` };
  if (!NAMESPACE.test(metadata.namespace)) return { ok: false, message: `request.object.metadata.namespace ${JSON.stringify(metadata.namespace.slice(0, 80))} is not a namespace the API server accepts` };
  return { ok: true, object: { ...object, metadata } };
}

/**
 * A tiny schema of the fields the model reads. Reading an object keeps only these fields (the
 * model never meets a field of another type, or a nesting it did not ask for); null is read as
 * absent (the API server writes an unset time as null), except as an element of a list.
 */
type Shape = 'string' | 'int' | 'json' | { map: 'string' } | { list: Shape } | { fields: Record<string, Shape>; required?: string[] };

const BACKEND: Shape = {
  fields: {
    service: { fields: { name: 'string', port: { fields: { name: 'string', number: 'int' } } } },
    resource: { fields: { apiGroup: 'string', kind: 'string', name: 'string' } },
  },
};

const METADATA: Shape = {
  fields: {
    name: 'string', namespace: 'string', uid: 'string', generation: 'int', creationTimestamp: 'string', deletionTimestamp: 'string',
    annotations: { map: 'string' }, labels: { map: 'string' },
  },
};

const INGRESS: Shape = {
  required: ['metadata'],
  fields: {
    metadata: METADATA,
    spec: {
      fields: {
        ingressClassName: 'string',
        defaultBackend: BACKEND,
        tls: { list: { fields: { hosts: { list: 'string' }, secretName: 'string' } } },
        rules: {
          list: {
            fields: {
              host: 'string',
              http: {
                required: ['paths'],
                fields: { paths: { list: { required: ['backend'], fields: { path: 'string', pathType: 'string', backend: BACKEND } } } },
              },
            },
          },
        },
      },
    },
  },
};

const PARENT_REF: Shape = { required: ['name'], fields: { group: 'string', kind: 'string', namespace: 'string', name: 'string', sectionName: 'string', port: 'int' } };
const VALUE_MATCH: Shape = { list: { required: ['name', 'value'], fields: { type: 'string', name: 'string', value: 'string' } } };

/** The HTTPRoute fields the Gateway API front end reads; filters are read defensively by the model (../model/gateway/filters.ts), so they pass as JSON. */
const HTTP_ROUTE: Shape = {
  required: ['metadata'],
  fields: {
    metadata: METADATA,
    spec: {
      fields: {
        parentRefs: { list: PARENT_REF },
        hostnames: { list: 'string' },
        rules: {
          list: {
            fields: {
              name: 'string',
              matches: { list: { fields: { path: { fields: { type: 'string', value: 'string' } }, headers: VALUE_MATCH, queryParams: VALUE_MATCH, method: 'string' } } },
              filters: { list: 'json' },
              backendRefs: { list: { required: ['name'], fields: { group: 'string', kind: 'string', name: 'string', namespace: 'string', port: 'int', weight: 'int', filters: { list: 'json' } } } },
              timeouts: 'json',
            },
          },
        },
      },
    },
  },
};

const GATEWAY: Shape = {
  required: ['metadata', 'spec'],
  fields: {
    metadata: METADATA,
    spec: {
      required: ['gatewayClassName'],
      fields: {
        gatewayClassName: 'string',
        listeners: {
          list: {
            required: ['name', 'port', 'protocol'],
            fields: {
              name: 'string', hostname: 'string', port: 'int', protocol: 'string',
              tls: { fields: { mode: 'string', certificateRefs: { list: { required: ['name'], fields: { group: 'string', kind: 'string', name: 'string', namespace: 'string' } } } } },
              allowedRoutes: {
                fields: {
                  namespaces: {
                    fields: {
                      from: 'string',
                      selector: { fields: { matchLabels: { map: 'string' }, matchExpressions: { list: { required: ['key', 'operator'], fields: { key: 'string', operator: 'string', values: { list: 'string' } } } } } },
                    },
                  },
                  kinds: { list: { required: ['kind'], fields: { group: 'string', kind: 'string' } } },
                },
              },
            },
          },
        },
      },
    },
  },
};

type Projected = { value: unknown } | { problem: string };

function project(v: unknown, shape: Shape, at: string): Projected {
  if (shape === 'string') return typeof v === 'string' ? { value: v } : { problem: `${at} must be a string` };
  if (shape === 'int') return Number.isSafeInteger(v) ? { value: v } : { problem: `${at} must be an integer` };
  if (shape === 'json') return { value: v };
  if ('map' in shape) {
    if (!isRecord(v)) return { problem: `${at} must be an object of strings` };
    for (const [k, x] of Object.entries(v)) if (typeof x !== 'string') return { problem: `${at}[${JSON.stringify(k.slice(0, 80))}] must be a string` };
    return { value: v };
  }
  if ('list' in shape) {
    if (!Array.isArray(v)) return { problem: `${at} must be a list` };
    const out = new Array<unknown>(v.length);
    for (let i = 0; i < v.length; i++) {
      if (v[i] === null || v[i] === undefined) return { problem: `${at}[${i}] must be ${shape.list === 'json' ? 'a value' : typeof shape.list === 'string' ? `a ${shape.list === 'int' ? 'integer' : 'string'}` : 'an object'}, not null` };
      const p = project(v[i], shape.list, `${at}[${i}]`);
      if ('problem' in p) return p;
      out[i] = p.value;
    }
    return { value: out };
  }
  if (!isRecord(v)) return { problem: `${at} must be an object` };
  const out: Record<string, unknown> = {};
  for (const r of shape.required ?? []) if (v[r] === undefined || v[r] === null) return { problem: `${at}.${r} is missing` };
  for (const [k, s] of Object.entries(shape.fields)) {
    if (v[k] === undefined || v[k] === null) continue;
    const p = project(v[k], s, `${at}.${k}`);
    if ('problem' in p) return p;
    out[k] = p.value;
  }
  return { value: out };
}

// ---- Messages

/** kubectl prints this after `admission webhook "…" denied the request: `. */
export function denialMessage(objectKey: string, denials: readonly Finding[], kind = 'Ingress'): string {
  const lines = denials.slice(0, MAX_DENIALS_LISTED).map((f) => `- ${f.field || '(object)'}: ${f.message}`);
  if (denials.length > MAX_DENIALS_LISTED) lines.push(`- and ${denials.length - MAX_DENIALS_LISTED} more (run \`ingress-rx lint\` on the manifest for all of them)`);
  return `ingress-rx refuses ${kind} ${objectKey}:\n${lines.join('\n')}`;
}

const MAX_DENIALS_LISTED = 20;
/** Kubernetes truncates a warning over 256 characters and drops warnings past 4096 characters in all. */
export const MAX_WARNING_CHARS = 256;
export const MAX_WARNINGS_TOTAL = 4096;

/** Findings as AdmissionReview warnings, within what the API server passes on. */
export function warningLines(findings: readonly Finding[]): string[] {
  const out: string[] = [];
  let total = 0;
  for (let i = 0; i < findings.length; i++) {
    const f = findings[i]!;
    let line = `${f.field ? `${f.field}: ` : ''}${f.message}`;
    if (line.length > MAX_WARNING_CHARS) line = `${line.slice(0, MAX_WARNING_CHARS - 1)}…`;
    const rest = findings.length - i - 1;
    // Keep room for the line saying how many more there are.
    if (total + line.length + (rest > 0 ? 40 : 0) > MAX_WARNINGS_TOTAL) {
      out.push(`and ${findings.length - i} more warnings`);
      break;
    }
    out.push(line);
    total += line.length;
  }
  return out;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
