// A Gateway's spec.tls.frontend (client certificate validation) and the listener table the data
// plane needs to detect misdirected requests. Each HTTPS listener takes the perPort entry of its
// port, else `default`; its caCertificateRefs name ConfigMaps (key `ca.crt`) in the Gateway's
// namespace, or another one with a ReferenceGrant there. A listener none of whose refs gives a CA
// is refused (ResolvedRefs=False, Accepted=False/NoValidCACertificate) and its hosts fail closed:
// their handshakes are refused, never served without validation.
//
// The table goes to Lua (lua/gateway_frontend.lua) keyed by listener hostname ("" for a listener
// without one, `*.x`, or the exact name; `:port` appended for a listener on another port than
// 443, whose server looks up among its port's entries only); the most specific entry of a TLS
// name (the SNI) or of a Host is its listener. Listeners of several Gateways with one hostname are one entry: the oldest
// Gateway's validation holds for it, so a newer Gateway cannot turn another's validation off or on.
// Names of Ingress hosts are entries of their own (group -1): no Gateway validation reaches them.
import type { ConfigMap, Gateway, GatewayListener, Secret } from '../../store/kube-types.js';
import type { GatewayResources } from '../../store/types.js';
import { caBundle } from '../checks/tls-secrets.js';
import type { ModelWarning } from '../core/types.js';
import { listenerProblem } from './attachment.js';
import { hostKey } from './listener-ports.js';
import { referencePermitted, refusedReference } from './references.js';

/** What a listener's ResolvedRefs/Accepted conditions say about its CA certificates. */
export interface FrontendProblem {
  readonly reason: 'InvalidCACertificateRef' | 'InvalidCACertificateKind' | 'RefNotPermitted';
  readonly message: string;
  /** No ref gives a CA: the listener is not accepted (NoValidCACertificate). */
  readonly noValidCA: boolean;
}

/** A listener hostname's client validation: `ca` null when none of its refs gave one (fail closed). */
export interface FrontendPolicy { readonly ca: string | null; readonly insecure: boolean }

/** The payload Lua reads: listener hostname → group; group → its validation, or null for none. */
export interface FrontendTable {
  readonly names: Readonly<Record<string, number>>;
  readonly policies: ReadonlyArray<FrontendPolicy | null>;
  /** The certificate uid of the listener without hostname: served for a name no host has (servers payload `_gateway`). */
  readonly catchAll?: string;
  /** The same per listener port other than 443 (`:port` → uid; servers payload `_gateway:port`). */
  readonly portCatchAll?: Readonly<Record<string, string>>;
  /** Hosts served through HTTPS listeners only: refused on plain HTTP when their listener validates clients. */
  readonly tlsOnly: readonly string[];
}

export interface GatewayFrontends {
  /** Null when no Gateway of ours has an HTTPS listener served: Lua does nothing per request. */
  readonly table: FrontendTable | null;
  /** `namespace/gateway/listener` → its CA problem. */
  readonly problems: ReadonlyMap<string, FrontendProblem>;
  /** `namespace/gateway` of Gateways with a validation in AllowInsecureFallback mode. */
  readonly insecure: ReadonlySet<string>;
}

/** At most this many bytes of CA certificates per listener (the CRD allows 16 refs). */
const MAX_CA_BYTES = 1024 * 1024;

interface Validation { mode?: string; caCertificateRefs?: Array<{ group?: string; kind?: string; name: string; namespace?: string }> }

/** The validation that applies to a listener's port: its perPort entry, else the default. */
function validationFor(gw: Gateway, port: number): { validation: Validation; field: string } | null {
  const frontend = gw.spec.tls?.frontend;
  if (!frontend) return null;
  const i = (frontend.perPort ?? []).findIndex((p) => p.port === port);
  if (i >= 0) {
    const v = frontend.perPort![i]!.tls?.validation;
    return v ? { validation: v, field: `spec.tls.frontend.perPort[${i}].tls.validation` } : null;
  }
  const v = frontend.default?.validation;
  return v ? { validation: v, field: 'spec.tls.frontend.default.validation' } : null;
}

function resolveCA(gw: Gateway, v: Validation, field: string, resources: GatewayResources, getConfigMap: (key: string) => ConfigMap | undefined): { ca: string | null; problem: FrontendProblem | null } {
  const gwNs = gw.metadata.namespace ?? '';
  let ca = '';
  let problem: Omit<FrontendProblem, 'noValidCA'> | null = null;
  const refs = v.caCertificateRefs ?? [];
  if (refs.length === 0) problem = { reason: 'InvalidCACertificateRef', message: `${field}.caCertificateRefs: at least one reference is required` };
  for (const [i, ref] of refs.entries()) {
    const at = `${field}.caCertificateRefs[${i}]`;
    const fail = (reason: FrontendProblem['reason'], message: string) => { problem ??= { reason, message: `${at}: ${message}` }; };
    if ((ref.group ?? '') !== '' || ref.kind !== 'ConfigMap') { fail('InvalidCACertificateKind', `${ref.group ? `${ref.group}/` : ''}${ref.kind} is not supported (only core ConfigMaps)`); continue; }
    const namespace = ref.namespace ?? gwNs;
    const from = { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: gwNs };
    const to = { group: '', kind: 'ConfigMap', namespace, name: ref.name };
    if (!referencePermitted(resources.referenceGrants, from, to)) { fail('RefNotPermitted', refusedReference(from, to)); continue; }
    const cm = getConfigMap(`${namespace}/${ref.name}`);
    if (!cm) { fail('InvalidCACertificateRef', `ConfigMap ${namespace}/${ref.name} not found`); continue; }
    try {
      // caBundle reads a Secret's `ca.crt`; a ConfigMap's data is the same text, unencoded.
      const pem = caBundle({ metadata: cm.metadata, stringData: { 'ca.crt': cm.data?.['ca.crt'] ?? '' } } as Secret);
      if (pem === undefined) { fail('InvalidCACertificateRef', `ConfigMap ${namespace}/${ref.name} has no data["ca.crt"]`); continue; }
      if (ca.length + pem.length > MAX_CA_BYTES) { fail('InvalidCACertificateRef', `the CA certificates are larger than ${MAX_CA_BYTES} bytes`); continue; }
      ca += pem;
    } catch (err) {
      fail('InvalidCACertificateRef', `ConfigMap ${namespace}/${ref.name}: ${(err as Error).message}`);
    }
  }
  const noValidCA = ca === '';
  return { ca: noValidCA ? null : ca, problem: problem ? { ...problem, noValidCA } : null };
}

const created = (gw: Gateway) => gw.metadata.creationTimestamp ?? '';

/**
 * The frontend table and each listener's CA problem. `ingressHosts`: the names Ingresses serve
 * (they keep their TLS: precedence rule). Only listeners served on the HTTPS port are entries.
 */
export function gatewayFrontends(
  resources: GatewayResources, getConfigMap: (key: string) => ConfigMap | undefined, ingressHosts: Iterable<string>, warnings: ModelWarning[],
  listenerCertificates: ReadonlyMap<string, { readonly uid: string }> = new Map(), tlsOnly: readonly string[] = [],
): GatewayFrontends {
  let catchAll: string | undefined;
  const portCatchAll: Record<string, string> = {};
  const problems = new Map<string, FrontendProblem>();
  const insecure = new Set<string>();
  const names: Record<string, number> = {};
  const policies: Array<FrontendPolicy | null> = [];
  // Oldest first (then namespace/name): the first Gateway to claim a hostname decides its validation.
  const gateways = [...resources.gateways].sort((a, b) => created(a).localeCompare(created(b))
    || `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
  for (const gw of gateways) {
    const gwKey = `${gw.metadata.namespace ?? ''}/${gw.metadata.name}`;
    const byPort = new Map<number, { policy: FrontendPolicy; problem: FrontendProblem | null } | null>();
    for (const [i, l] of (gw.spec.listeners ?? []).entries()) {
      if (l.protocol !== 'HTTPS' || listenerProblem(l, { local: l.port }) !== null) continue;
      if (!byPort.has(l.port)) byPort.set(l.port, policyFor(gw, l, resources, getConfigMap, insecure, gwKey));
      const resolved = byPort.get(l.port)!;
      if (resolved?.problem) {
        problems.set(`${gwKey}/${l.name}`, resolved.problem);
        warnings.push({ object: `Gateway ${gwKey}`, field: `spec.listeners[${i}]`, message: `listener ${l.name}: ${resolved.problem.message}${resolved.problem.noValidCA ? '; its handshakes are refused' : ''}` });
      }
      // Off 443, `hostname:port` (`:port` without one): each port's listeners are a table of their own.
      const name = hostKey((l.hostname ?? '').toLowerCase(), l.port);
      if (names[name] !== undefined) {
        const held = policies[names[name]!];
        if (JSON.stringify(held) !== JSON.stringify(resolved?.policy ?? null)) {
          warnings.push({ object: `Gateway ${gwKey}`, field: `spec.listeners[${i}].hostname`, message: `listener ${l.name}: an older Gateway's listener has hostname "${name || '(none)'}" with another client certificate validation; that one holds` });
        }
        continue;
      }
      const uid = l.hostname ? undefined : listenerCertificates.get(`${gwKey}/${l.name}`)?.uid;
      if (uid && name === '') catchAll = uid;
      else if (uid) portCatchAll[name] = uid;
      names[name] = policies.length;
      policies.push(resolved?.policy ?? null);
    }
  }
  if (policies.length === 0) return { table: null, problems, insecure };
  for (const host of ingressHosts) if (host !== '_') names[host.toLowerCase()] = -1;
  const ported = Object.keys(portCatchAll).length > 0 ? { portCatchAll } : {};
  return { table: { names, policies, ...(catchAll ? { catchAll } : {}), ...ported, tlsOnly }, problems, insecure };
}

function policyFor(
  gw: Gateway, l: GatewayListener, resources: GatewayResources, getConfigMap: (key: string) => ConfigMap | undefined, insecure: Set<string>, gwKey: string,
): { policy: FrontendPolicy; problem: FrontendProblem | null } | null {
  const found = validationFor(gw, l.port);
  if (!found) return null;
  const mode = found.validation.mode ?? 'AllowValidOnly';
  const { ca, problem } = resolveCA(gw, found.validation, found.field, resources, getConfigMap);
  if (mode !== 'AllowValidOnly' && mode !== 'AllowInsecureFallback') {
    // The CRD refuses other values; one that reaches us anyway is validated as strictly as it can be.
    return { policy: { ca, insecure: false }, problem: problem ?? { reason: 'InvalidCACertificateRef', message: `${found.field}.mode: "${mode.slice(0, 64)}" is not AllowValidOnly or AllowInsecureFallback; AllowValidOnly applies`, noValidCA: false } };
  }
  if (mode === 'AllowInsecureFallback') insecure.add(gwKey);
  return { policy: { ca, insecure: mode === 'AllowInsecureFallback' }, problem };
}
