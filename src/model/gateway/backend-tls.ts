// BackendTLSPolicy (gateway.networking.k8s.io/v1) and a Gateway's spec.tls.backend: TLS from
// NGINX to the Services a policy targets (its namespace's only: targetRefs have no namespace).
// NGINX 1.22 sets proxy_ssl_* (SNI and the verified name: the policy's hostname; the CA bundle of
// its caCertificateRefs; the Gateway's client certificate) per location only, and reads the
// files at load. On a dynamic host a route whose backend needs TLS is still the router's: it
// names one of the router's TLS locations (Configuration.backendTLSLocations, one per distinct
// hostname, CA bundle and client certificate, named by their hash; src/render/dynamic-routes.ts),
// so a route change reloads nothing and only a new, changed or removed combination does. On a
// static host (dynamic routes off) the location itself gets proxy_ssl_*. What cannot be verified
// is never sent unverified: the location answers 500. Run at every full build after the
// translation (as ./listener-tls.ts): a ConfigMap's change needs no route change.
import { createHash } from 'node:crypto';
import type { BackendTLSPolicy, ConfigMap, Gateway, Secret, Service } from '../../store/kube-types.js';
import type { GatewayResources } from '../../store/types.js';
import { caBundle, keyPair, type KeyPair } from '../checks/tls-secrets.js';
import { hostProblem } from '../core/paths.js';
import type { BackendTLSLocation, Location, ModelWarning, Server } from '../core/types.js';
import { withLocationSettings } from '../core/location-settings.js';
import { GATEWAY_GROUP, referencePermitted, refusedReference } from './references.js';
import type { BackendPlan, RouteOutcome } from './translate.js';

/** A policy's Accepted and ResolvedRefs, before they are stamped per ancestor Gateway. */
export interface PolicyVerdict {
  readonly policy: BackendTLSPolicy;
  readonly accepted: { readonly ok: boolean; readonly reason: string; readonly message: string };
  readonly resolvedRefs: { readonly ok: boolean; readonly reason: string; readonly message: string };
  /** `namespace/name` of the Gateways whose routes send traffic to a Service it targets. */
  readonly ancestors: readonly string[];
}

/** Why a Gateway's spec.tls.backend.clientCertificateRef is not used (its ResolvedRefs). */
export interface ClientCertificateProblem { readonly reason: 'InvalidClientCertificateRef' | 'RefNotPermitted'; readonly message: string }

export interface BackendTLS {
  readonly servers: readonly Server[];
  /** The router's TLS locations the dynamic hosts' routes name, sorted by id (at most MAX_TLS_LOCATIONS). */
  readonly locations: readonly BackendTLSLocation[];
  /** `namespace/name` → the policy's verdict. */
  readonly policies: ReadonlyMap<string, PolicyVerdict>;
  /** Gateway `namespace/name` → whether its clientCertificateRef resolved (only Gateways that set one). */
  readonly clientCertificates: ReadonlyMap<string, ClientCertificateProblem | null>;
}

export interface BackendTLSInputs {
  readonly resources: GatewayResources;
  readonly plans: readonly BackendPlan[];
  readonly routes: readonly RouteOutcome[];
  readonly getService: (key: string) => Service | undefined;
  readonly getConfigMap: (key: string) => ConfigMap | undefined;
  readonly getSecret: (key: string) => Secret | undefined;
  readonly warnings: ModelWarning[];
}

/** The TLS a Service port is reached with, or why it cannot be. */
type Profile = { readonly policy: string; readonly rank: number; readonly hostname: string; readonly ca: string } | { readonly policy: string; readonly problem: string };

const keyOf = (o: { metadata: { namespace?: string; name: string } }) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const MAX_CA_REFS = 8;
/**
 * The most TLS locations the router's servers get (each is a location in every server that
 * serves dynamic hosts and a CA bundle NGINX loads per such server): the combinations of the
 * oldest policies get one; routes needing another answer 500, named.
 */
export const MAX_TLS_LOCATIONS = 64;

export function backendTLS(servers: readonly Server[], inputs: BackendTLSInputs): BackendTLS {
  const { resources, warnings } = inputs;
  const clientCertificates = new Map<string, ClientCertificateProblem | null>();
  const clientPairs = new Map<string, { secret: string; pair: KeyPair }>();
  for (const gw of resources.gateways) {
    const ref = gw.spec.tls?.backend?.clientCertificateRef;
    if (!ref) continue;
    const r = clientCertificate(gw, ref, inputs);
    clientCertificates.set(keyOf(gw), 'problem' in r ? r.problem : null);
    if ('problem' in r) warnings.push({ object: `Gateway ${keyOf(gw)}`, field: 'spec.tls.backend.clientCertificateRef', message: `${r.problem.message}; no client certificate is shown to TLS backends` });
    else clientPairs.set(keyOf(gw), r);
  }
  if (resources.backendTLSPolicies.length === 0) return { servers, locations: [], policies: new Map(), clientCertificates };

  // Oldest first, then by namespace/name: the first policy for a target and sectionName wins.
  const ordered = [...resources.backendTLSPolicies].sort((a, b) => {
    const ta = a.metadata.creationTimestamp ?? '';
    const tb = b.metadata.creationTimestamp ?? '';
    if (ta !== tb) return ta < tb ? -1 : 1;
    return keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0;
  });
  const targets = new Map<string, string>(); // `ns/service#sectionName` ('' for the whole Service) → policy key
  const verdicts = new Map<string, { policy: BackendTLSPolicy; accepted: PolicyVerdict['accepted']; resolvedRefs: PolicyVerdict['resolvedRefs']; profile: Profile; targeted: Set<string> }>();
  for (const policy of ordered) {
    const key = keyOf(policy);
    const ns = policy.metadata.namespace ?? '';
    const object = `BackendTLSPolicy ${key}`;
    const v = validate(policy, verdicts.size, inputs);
    const services = new Set<string>();
    const targeted = new Set<string>();
    let conflicted: string | null = null;
    for (const [i, t] of (policy.spec?.targetRefs ?? []).entries()) {
      if ((t.group ?? '') !== '' || (t.kind ?? 'Service') !== 'Service' || typeof t.name !== 'string') {
        warnings.push({ object, field: `spec.targetRefs[${i}]`, message: `${t.group ?? ''}/${t.kind ?? ''} is not a Service (only Services are supported); ignored` });
        continue;
      }
      const target = `${ns}/${t.name}#${t.sectionName ?? ''}`;
      targeted.add(`${ns}/${t.name}`);
      const winner = targets.get(target);
      if (winner !== undefined && winner !== key) {
        conflicted = `targets Service ${ns}/${t.name}${t.sectionName ? ` port ${t.sectionName}` : ''} as the older BackendTLSPolicy ${winner} does, which takes precedence`;
        continue;
      }
      targets.set(target, key);
      services.add(`${ns}/${t.name}`);
    }
    let accepted = v.accepted;
    if (conflicted !== null) {
      warnings.push({ object, field: 'spec.targetRefs', message: `${conflicted}; not applied there` });
      if (services.size === 0) accepted = { ok: false, reason: 'Conflicted', message: conflicted };
    }
    if (!v.accepted.ok || !v.resolvedRefs.ok) warnings.push({ object, field: 'spec.validation', message: `${v.resolvedRefs.ok ? v.accepted.message : v.resolvedRefs.message}; the Services it targets answer 500` });
    verdicts.set(key, { policy, accepted, resolvedRefs: v.resolvedRefs, profile: v.profile, targeted });
  }

  const plans = new Map(inputs.plans.map((p) => [p.name, p]));
  /** The profile of a backend (by name), or null when no policy targets its Service port. */
  const profileOf = (backend: string): Profile | null => {
    const plan = plans.get(backend);
    if (!plan) return null;
    const svc = `${plan.namespace}/${plan.service}`;
    const portName = inputs.getService(svc)?.spec?.ports?.find((p) => String(p.port) === plan.port)?.name ?? '';
    const policy = (portName !== '' ? targets.get(`${svc}#${portName}`) : undefined) ?? targets.get(`${svc}#`);
    return policy === undefined ? null : verdicts.get(policy)!.profile;
  };

  const ancestors = policyAncestors(inputs.routes, verdicts);
  const policies = new Map<string, PolicyVerdict>();
  for (const [key, v] of verdicts) policies.set(key, { policy: v.policy, accepted: v.accepted, resolvedRefs: v.resolvedRefs, ancestors: [...(ancestors.get(key) ?? [])].sort() });

  const client = (loc: Location) => clientFor(loc, inputs.routes, clientPairs);
  const routed = routedTLS(servers, profileOf, client, warnings);
  const out = servers.map((server) => (server.staticBecause === null ? routed.server(server) : securedServer(server, profileOf, client, warnings)));
  return { servers: out, locations: routed.locations, policies, clientCertificates };
}

function validate(policy: BackendTLSPolicy, rank: number, inputs: BackendTLSInputs): { accepted: PolicyVerdict['accepted']; resolvedRefs: PolicyVerdict['resolvedRefs']; profile: Profile } {
  const key = keyOf(policy);
  const ns = policy.metadata.namespace ?? '';
  const val = policy.spec?.validation ?? {};
  const resolved = { ok: true, reason: 'ResolvedRefs', message: 'every caCertificateRef resolved' };
  const invalid = (message: string) => ({ accepted: { ok: false, reason: 'Invalid', message }, resolvedRefs: resolved, profile: { policy: key, problem: message } });
  const hostname = typeof val.hostname === 'string' ? val.hostname : '';
  const hp = hostname === '' ? 'spec.validation.hostname is required' : hostname.includes('*') ? `hostname ${JSON.stringify(hostname.slice(0, 100))} must be a precise name (no wildcard)` : hostProblem(hostname);
  if (hp) return invalid(`spec.validation.hostname: ${hp}`);
  const refs = val.caCertificateRefs ?? [];
  const wellKnown = val.wellKnownCACertificates ?? '';
  if (refs.length > 0 && wellKnown !== '') return invalid('spec.validation: caCertificateRefs and wellKnownCACertificates are exclusive');
  if (refs.length === 0 && wellKnown === '') return invalid('spec.validation: caCertificateRefs or wellKnownCACertificates is required');
  if (wellKnown !== '') return invalid(`spec.validation.wellKnownCACertificates ${JSON.stringify(String(wellKnown).slice(0, 100))} is not supported (only caCertificateRefs)`);
  if ((val.subjectAltNames ?? []).length > 0) {
    return invalid('spec.validation.subjectAltNames is not supported: NGINX verifies one name, the one it sends by SNI (the hostname)');
  }
  if (refs.length > MAX_CA_REFS) return invalid(`spec.validation.caCertificateRefs: ${refs.length} refs, at most ${MAX_CA_REFS}`);
  let ca = '';
  let bad: { reason: string; message: string } | null = null;
  for (const [i, ref] of refs.entries()) {
    const field = `spec.validation.caCertificateRefs[${i}]`;
    if ((ref.group ?? '') !== '' || ref.kind !== 'ConfigMap') {
      bad ??= { reason: 'InvalidKind', message: `${field}: ${ref.group ?? ''}/${ref.kind ?? ''} is not a ConfigMap (only ConfigMaps are supported)` };
      continue;
    }
    const cm = inputs.getConfigMap(`${ns}/${ref.name}`);
    if (!cm) {
      bad ??= { reason: 'InvalidCACertificateRef', message: `${field}: ConfigMap ${ns}/${ref.name} not found` };
      continue;
    }
    try {
      const pem = caBundle({ metadata: cm.metadata, stringData: { 'ca.crt': cm.data?.['ca.crt'] ?? '' } } as Secret);
      if (pem === undefined) throw new Error('data["ca.crt"] is missing or empty');
      ca += pem;
    } catch (err) {
      bad ??= { reason: 'InvalidCACertificateRef', message: `${field}: ConfigMap ${ns}/${ref.name}: ${(err as Error).message}` };
    }
  }
  if (bad === null) return { accepted: { ok: true, reason: 'Accepted', message: 'applied to the Services it targets' }, resolvedRefs: resolved, profile: { policy: key, rank, hostname, ca } };
  // One unusable ref fails every connection (the spec): never a weaker check than asked for.
  return {
    accepted: ca === '' ? { ok: false, reason: 'NoValidCACertificate', message: `no caCertificateRef is usable: ${bad.message}` } : { ok: true, reason: 'Accepted', message: 'applied; connections fail while a caCertificateRef is invalid' },
    resolvedRefs: { ok: false, ...bad },
    profile: { policy: key, problem: bad.message },
  };
}

function clientCertificate(gw: Gateway, ref: { group?: string; kind?: string; name: string; namespace?: string }, inputs: BackendTLSInputs): { secret: string; pair: KeyPair } | { problem: ClientCertificateProblem } {
  const gwNs = gw.metadata.namespace ?? '';
  const invalid = (message: string) => ({ problem: { reason: 'InvalidClientCertificateRef' as const, message: `spec.tls.backend.clientCertificateRef: ${message}` } });
  if ((ref.group ?? '') !== '' || (ref.kind ?? 'Secret') !== 'Secret') return invalid(`${ref.group ?? ''}/${ref.kind ?? ''} is not a Secret (only core Secrets are supported)`);
  const namespace = ref.namespace ?? gwNs;
  const from = { group: GATEWAY_GROUP, kind: 'Gateway', namespace: gwNs };
  const to = { group: '', kind: 'Secret', namespace, name: ref.name };
  if (!referencePermitted(inputs.resources.referenceGrants, from, to)) return { problem: { reason: 'RefNotPermitted', message: `spec.tls.backend.clientCertificateRef: ${refusedReference(from, to)}` } };
  const secret = inputs.getSecret(`${namespace}/${ref.name}`);
  if (!secret) return invalid(`Secret ${namespace}/${ref.name} not found`);
  try {
    const pair = keyPair(secret);
    if (!pair) return invalid(`Secret ${namespace}/${ref.name} has no tls.crt and tls.key`);
    return { secret: `${namespace}/${ref.name}`, pair };
  } catch (err) {
    return invalid(`Secret ${namespace}/${ref.name}: ${(err as Error).message}`);
  }
}

/** The Gateways each policy is applied through: those whose attached routes send to a Service it targets. */
function policyAncestors(routes: readonly RouteOutcome[], verdicts: ReadonlyMap<string, { targeted: Set<string> }>): Map<string, Set<string>> {
  const byService = new Map<string, string[]>();
  for (const [key, v] of verdicts) for (const s of v.targeted) byService.set(s, [...(byService.get(s) ?? []), key]);
  const out = new Map<string, Set<string>>();
  for (const outcome of routes) {
    const ns = outcome.route.metadata.namespace ?? '';
    const gateways = new Set<string>();
    for (const p of outcome.parents) if ('listeners' in p) for (const l of p.listeners) gateways.add(l.split('/').slice(0, 2).join('/'));
    if (gateways.size === 0) continue;
    for (const rule of outcome.route.spec.rules ?? []) {
      for (const b of rule.backendRefs ?? []) {
        for (const policy of byService.get(`${b.namespace ?? ns}/${b.name}`) ?? []) {
          const set = out.get(policy) ?? new Set<string>();
          for (const g of gateways) set.add(g);
          out.set(policy, set);
        }
      }
    }
  }
  return out;
}

/** The client certificate of the first Gateway (by name) the location's route is attached through that has one. */
function clientFor(loc: Location, routes: readonly RouteOutcome[], pairs: ReadonlyMap<string, { secret: string; pair: KeyPair }>): { gateway: string; secret: string; pair: KeyPair } | null {
  if (pairs.size === 0 || loc.ingress === null) return null;
  const outcome = routes.find((o) => o.route.metadata.name === loc.ingress!.name && (o.route.metadata.namespace ?? '') === loc.ingress!.namespace);
  const gateways = new Set<string>();
  for (const p of outcome?.parents ?? []) if ('listeners' in p) for (const l of p.listeners) gateways.add(l.split('/').slice(0, 2).join('/'));
  for (const g of [...gateways].sort()) {
    const c = pairs.get(g);
    if (c) return { gateway: g, ...c };
  }
  return null;
}

type Client = { gateway: string; secret: string; pair: KeyPair } | null;

/** The id of a TLS location: a hash of what it sets (the same combination is one location whatever policies ask for it). */
function locationId(hostname: string, ca: string, client: Client): string {
  const h = createHash('sha256').update(hostname).update('\u0000').update(ca);
  if (client) h.update('\u0000').update(client.pair.cert).update('\u0000').update(client.pair.key);
  return h.digest('hex').slice(0, 16);
}

/**
 * Dynamic hosts: each covered location names its TLS location (Location.backendTLS), or answers
 * 500 with the reason (a policy that cannot verify; weighted backends that need different TLS or
 * none; an h2c backend; a combination over MAX_TLS_LOCATIONS). A rule's retries are not served
 * over TLS (the router's retry locations speak plain HTTP): named, and the route served without.
 */
function routedTLS(servers: readonly Server[], profileOf: (backend: string) => Profile | null, clientFor: (loc: Location) => Client, warnings: ModelWarning[]): {
  server(server: Server): Server; locations: readonly BackendTLSLocation[];
} {
  type Need = { readonly location: BackendTLSLocation; readonly rank: number; readonly policy: string };
  const needs = new Map<string, Need>();
  const decisions = new Map<Location, { id: string } | { problem: string } | null>();
  for (const server of servers) {
    if (server.staticBecause !== null) continue;
    for (const loc of server.locations) {
      if (loc.denied) continue;
      const profiles = (loc.split ? loc.split.map((b) => b.backend) : [loc.backend]).map(profileOf);
      if (profiles.every((p) => p === null)) continue;
      const decide = (): { id: string } | { problem: string } => {
        const bad = profiles.find((p) => p !== null && 'problem' in p);
        if (bad) return { problem: `BackendTLSPolicy ${bad.policy}: ${(bad as { problem: string }).problem}` };
        const named = profiles.find((p) => p !== null)!;
        if (loc.upstreamProtocol === 'h2c') return { problem: `BackendTLSPolicy ${named.policy}: the backend's appProtocol is kubernetes.io/h2c (HTTP/2 cleartext), which cannot be reached over TLS` };
        const client = clientFor(loc);
        const ids = profiles.map((p) => (p === null || 'problem' in p ? null : locationId(p.hostname, p.ca, client)));
        if (ids.some((x) => x !== ids[0])) return { problem: `BackendTLSPolicy ${named.policy}: weighted backendRefs reached with different TLS (or some without) are not served` };
        const p = named as Extract<Profile, { rank: number }>;
        const id = ids[0]!;
        const known = needs.get(id);
        if (!known || p.rank < known.rank) {
          needs.set(id, { rank: p.rank, policy: p.policy, location: { id, hostname: p.hostname, ca: p.ca, clientCertificate: client ? { cert: client.pair.cert, key: client.pair.key } : null } });
        }
        return { id };
      };
      decisions.set(loc, decide());
    }
  }
  // The combinations of the oldest policies first; the rest answer 500, each policy named once.
  const kept = [...needs.values()].sort((a, b) => a.rank - b.rank || (a.location.id < b.location.id ? -1 : 1));
  const over = new Map<string, string>(); // id → policy
  for (const n of kept.slice(MAX_TLS_LOCATIONS)) {
    over.set(n.location.id, n.policy);
    warnings.push({ object: `BackendTLSPolicy ${n.policy}`, field: 'spec.validation', message: `more than ${MAX_TLS_LOCATIONS} distinct combinations of hostname, CA certificates and Gateway client certificate are in use (one NGINX location each); the Services it targets answer 500` });
  }
  const locations = kept.slice(0, MAX_TLS_LOCATIONS).map((n) => n.location).sort((a, b) => (a.id < b.id ? -1 : 1));
  return {
    locations,
    server(server) {
      if (!server.locations.some((loc) => decisions.get(loc))) return server;
      const locations = server.locations.map((loc) => {
        const d = decisions.get(loc);
        if (!d) return loc;
        if ('problem' in d) return deny(server, loc, d.problem, warnings);
        const cut = over.get(d.id);
        if (cut !== undefined) return deny(server, loc, `BackendTLSPolicy ${cut}: over the ${MAX_TLS_LOCATIONS} TLS locations NGINX is given`, warnings);
        if (loc.retry) {
          warnings.push({ object: objectOf(server, loc), field: `${fieldOf(loc)}.retry`.replace(/^\./, ''), message: `retries are not served for a backend reached over TLS (BackendTLSPolicy); ${loc.pathType} ${loc.path} on ${server.hostname} is served without` });
          const { retry: _retry, ...rest } = loc;
          return { ...rest, backendTLS: d.id };
        }
        return { ...loc, backendTLS: d.id };
      });
      return { ...server, locations };
    },
  };
}

const objectOf = (server: Server, loc: Location) => (loc.ingress ? `HTTPRoute ${loc.ingress.namespace}/${loc.ingress.name}` : `host ${server.hostname}`);
const fieldOf = (loc: Location) => (loc.ingress?.rule !== undefined ? `spec.rules[${loc.ingress.rule}]` : '');

function deny(server: Server, loc: Location, why: string, warnings: ModelWarning[]): Location {
  warnings.push({ object: objectOf(server, loc), field: fieldOf(loc), message: `${why}; ${loc.pathType} ${loc.path} on ${server.hostname} answers 500` });
  return { ...loc, denied: why, deniedStatus: 500 };
}

/**
 * A static host (dynamic routes off): its policy-covered locations reach their backends over
 * verified TLS with proxy_ssl_* of their own, or answer 500 when that cannot be done.
 */
function securedServer(server: Server, profileOf: (backend: string) => Profile | null, clientFor: (loc: Location) => Client, warnings: ModelWarning[]): Server {
  const covered = server.locations.map((loc) => (loc.denied ? null : loc.split ? loc.split.map((b) => profileOf(b.backend)).find((p) => p !== null) ?? null : profileOf(loc.backend)));
  if (covered.every((p) => p === null)) return server;
  const locations = server.locations.map((loc, i) => {
    const p = covered[i];
    if (p === null || p === undefined) return loc;
    if ('problem' in p) return deny(server, loc, `BackendTLSPolicy ${p.policy}: ${p.problem}`, warnings);
    if (loc.split || loc.when || loc.filters) return deny(server, loc, `BackendTLSPolicy ${p.policy}: header, query parameter and method matches, filters and weighted backendRefs are served by the Lua router only`, warnings);
    const client = clientFor(loc);
    // ':' is in no Kubernetes name: these files never share a path with a Secret's.
    const id = `${p.policy}:backendtlspolicy${client ? `:${client.gateway.replace('/', ':')}` : ''}`;
    return {
      ...loc,
      settings: withLocationSettings(loc.settings, {
        backendProtocol: 'HTTPS' as const,
        proxySSL: {
          secret: id, ca: p.ca, clientCertificate: client?.pair ?? null, ciphers: 'DEFAULT', protocols: ['TLSv1.2', 'TLSv1.3'],
          name: p.hostname, verify: 'on' as const, verifyDepth: 4, serverName: 'on' as const,
        },
      }),
    };
  });
  return { ...server, locations };
}
