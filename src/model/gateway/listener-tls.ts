// HTTPS listeners (tls.mode Terminate): their certificateRefs → the certificates of the hosts
// served through them, by SNI through the same certificates payload as Ingress TLS. A Secret in
// another namespace is read only with a ReferenceGrant in that namespace allowing Gateways of the
// listener's namespace; a listener none of whose refs gives a usable certificate for a host leaves
// that host on the default certificate (as an Ingress host whose Secret is unusable), and its
// ResolvedRefs condition says why. Run at every full build, outside the translation's memo: a
// Secret's change reaches the hosts without any route change.
import type { GatewayListener, Secret } from '../../store/kube-types.js';
import type { ListenerSets } from './listener-sets.js';
import type { GatewayResources } from '../../store/types.js';
import { certificateCoversHost, certificateExpired, type CertificateResult, type ParsedCertificate } from '../core/certificates.js';
import { FALLBACK_UID } from '../core/payload.js';
import type { Certificate, ModelWarning, Server } from '../core/types.js';
import { GATEWAY_GROUP, referencePermitted, refusedReference } from './references.js';

/** Why a listener's certificateRefs give nothing, for its ResolvedRefs condition. */
export interface ListenerRefProblem { readonly reason: 'InvalidCertificateRef' | 'RefNotPermitted'; readonly message: string }

export interface GatewayTLS {
  /** The translation's servers, those served through HTTPS listeners with their certificates. */
  readonly servers: readonly Server[];
  /** uid → certificate used by those servers. */
  readonly certificates: Readonly<Record<string, Certificate>>;
  /** Listener key (`namespace/gateway/listener`, `ListenerSet namespace/name/listener`) → why its certificateRefs resolve to no certificate. */
  readonly problems: ReadonlyMap<string, ListenerRefProblem>;
  /** `namespace/gateway/listener` → the certificate of its first usable ref (a name no host has, through a listener without hostname). */
  readonly listenerCertificates: ReadonlyMap<string, Certificate>;
}

export interface GatewayTLSInputs {
  readonly resources: GatewayResources;
  /** The ListenerSets on our Gateways (the translation's): their HTTPS listeners' certificates too. */
  readonly listenerSets: ListenerSets;
  /** Host → the HTTPS listeners (`namespace/gateway/listener`) it is served through (the translation's). */
  readonly tlsListeners: ReadonlyMap<string, readonly string[]>;
  readonly getSecret: (key: string) => Secret | undefined;
  readonly readCertificate: (secretKey: string, secret: Secret) => CertificateResult;
  readonly defaultCertificate: string | null;
  readonly date: Date;
  readonly warnings: ModelWarning[];
}

/** Host → its server with a certificate, reused while the base server and certificate are the same. */
export type GatewayTLSCache = Map<string, { base: Server; certificate: string; tlsSecret: string | null; server: Server }>;

type Resolved = { readonly ok: true; readonly secret: string; readonly parsed: ParsedCertificate } | { readonly ok: false; readonly problem: ListenerRefProblem };

export function gatewayTLS(servers: readonly Server[], inputs: GatewayTLSInputs, cache: GatewayTLSCache): GatewayTLS {
  const listeners = new Map<string, { object: string; field: string; refs: Resolved[] }>();
  const problems = new Map<string, ListenerRefProblem>();
  const listenerCertificates = new Map<string, Certificate>();
  const owned: Array<{ owner: Owner; key: string; index: number; listener: GatewayListener }> = [];
  for (const gw of inputs.resources.gateways) {
    const owner = { kind: 'Gateway' as const, namespace: gw.metadata.namespace ?? '', name: gw.metadata.name };
    for (const [index, listener] of (gw.spec.listeners ?? []).entries()) owned.push({ owner, key: `${owner.namespace}/${owner.name}/${listener.name}`, index, listener });
  }
  // A ListenerSet's listeners refer with its own namespace's rights: a grant to its Gateway is not inherited.
  for (const set of inputs.listenerSets.values()) {
    const owner = { kind: 'ListenerSet' as const, namespace: set.set.metadata.namespace ?? '', name: set.set.metadata.name };
    for (const l of set.listeners) if (!l.conflict) owned.push({ owner, key: l.key, index: l.index, listener: l.listener });
  }
  for (const { owner, key, index, listener: l } of owned) {
    if (l.protocol !== 'HTTPS') continue;
    const object = `${owner.kind} ${owner.namespace}/${owner.name}`;
    const field = `spec.listeners[${index}].tls.certificateRefs`;
    const refs = (l.tls?.certificateRefs ?? []).map((ref, j) => resolveRef(owner, l, j, ref, inputs));
    for (const [j, r] of refs.entries()) if (!r.ok) inputs.warnings.push({ object, field: `${field}[${j}]`, message: r.problem.message });
    const bad = refs.find((r): r is Extract<Resolved, { ok: false }> => !r.ok);
    if (!refs.some((r) => r.ok) && bad) problems.set(key, bad.problem);
    listeners.set(key, { object, field, refs });
    const first = refs.find((r): r is Extract<Resolved, { ok: true }> => r.ok);
    if (first) listenerCertificates.set(key, first.parsed.certificate);
  }
  const certificates: Record<string, Certificate> = {};
  const out = servers.map((base) => {
    const through = inputs.tlsListeners.get(base.hostname);
    if (!through || through.length === 0) return base;
    // `host:port`: a host of an HTTPS listener on another port than 443 (./listener-ports.ts).
    const name = base.hostname.includes(':') ? base.hostname.slice(0, base.hostname.lastIndexOf(':')) : base.hostname;
    let chosen: { certificate: string; tlsSecret: string | null } | null = null;
    for (const key of through) {
      for (const r of listeners.get(key)?.refs ?? []) {
        if (!r.ok || !certificateCoversHost(r.parsed, name)) continue;
        chosen = { certificate: r.parsed.certificate.uid, tlsSecret: r.secret };
        certificates[r.parsed.certificate.uid] = r.parsed.certificate;
        break;
      }
      if (chosen) break;
    }
    if (!chosen) {
      const first = listeners.get(through[0]!);
      inputs.warnings.push({
        object: first?.object ?? '', field: first?.field ?? '',
        message: `no usable certificate of listener ${through.join(', ')} covers host ${name}; it uses the default certificate`,
      });
      chosen = { certificate: inputs.defaultCertificate ?? FALLBACK_UID, tlsSecret: null };
    }
    const e = cache.get(base.hostname);
    if (e && e.base === base && e.certificate === chosen.certificate && e.tlsSecret === chosen.tlsSecret) return e.server;
    const server = { ...base, ...chosen };
    cache.set(base.hostname, { base, ...chosen, server });
    return server;
  });
  for (const host of [...cache.keys()]) if (!inputs.tlsListeners.has(host)) cache.delete(host);
  return { servers: out, certificates, problems, listenerCertificates };
}

/** The object whose listener refers: a Gateway or a ListenerSet, whose kind and namespace a ReferenceGrant must name. */
interface Owner { readonly kind: 'Gateway' | 'ListenerSet'; readonly namespace: string; readonly name: string }

function resolveRef(owner: Owner, l: GatewayListener, j: number, ref: { group?: string; kind?: string; name: string; namespace?: string }, inputs: GatewayTLSInputs): Resolved {
  const gwNs = owner.namespace;
  const field = `tls.certificateRefs[${j}]`;
  const invalid = (message: string): Resolved => ({ ok: false, problem: { reason: 'InvalidCertificateRef', message: `listener ${l.name} ${field}: ${message}` } });
  if ((ref.group ?? '') !== '' || (ref.kind ?? 'Secret') !== 'Secret') return invalid(`${ref.group ?? ''}/${ref.kind} is not a Secret (only core Secrets are supported)`);
  const namespace = ref.namespace ?? gwNs;
  const from = { group: GATEWAY_GROUP, kind: owner.kind, namespace: gwNs };
  const to = { group: '', kind: 'Secret', namespace, name: ref.name };
  if (!referencePermitted(inputs.resources.referenceGrants, from, to)) {
    return { ok: false, problem: { reason: 'RefNotPermitted', message: `listener ${l.name} ${field}: ${refusedReference(from, to)}` } };
  }
  const secretKey = `${namespace}/${ref.name}`;
  const secret = inputs.getSecret(secretKey);
  if (!secret) return invalid(`Secret ${secretKey} not found`);
  const r = inputs.readCertificate(secretKey, secret);
  if (!r.ok) return invalid(`Secret ${secretKey}: ${r.reason}`);
  if (certificateExpired(r.value, inputs.date)) return invalid(`Secret ${secretKey}: certificate expired at ${r.value.certificate.notAfter}`);
  return { ok: true, secret: secretKey, parsed: r.value };
}
