// TLS selection: the --default-ssl-certificate, and for each host the certificate of the oldest
// of its Ingresses with a TLS section, as ingress-nginx chooses it; a Secret that is missing,
// broken, for other hosts or expired leaves the host HTTPS with the default certificate and a
// warning. Rechecked at every full build (certificates expire); a host's server with its
// certificate is memoised, so an unchanged host keeps the same Server object.
import type { Secret } from '../../store/kube-types.js';
import type { StoreReader } from '../../store/types.js';
import { certificateCoversHost, certificateExpired, type CertificateResult, type ParsedCertificate } from '../core/certificates.js';
import type { IngressFragment } from './fragments.js';
import { DEFAULT_SERVER } from '../core/paths.js';
import { FALLBACK_UID } from '../core/payload.js';
import type { HostEntry, Topology } from './topology.js';
import type { Certificate, ModelWarning, Server } from '../core/types.js';

/** What the TLS selection keeps between builds. */
export interface TLSCache {
  /** Host → its server with a certificate, valid while its base server and certificate are the same. */
  readonly servers: Map<string, ServerEntry>;
  /** Per parsed certificate: host → whether it covers the host. */
  readonly coverage: WeakMap<ParsedCertificate, Map<string, boolean>>;
}

interface ServerEntry {
  base: Server;
  certificate: string | null;
  tlsSecret: string | null;
  server: Server;
  /**
   * The Secret object and certificate a host's TLS section named (by the host, or a section
   * without hosts): with the same base server and Secret object, the same certificate again,
   * unless it has expired since. Null when the choice read anything else.
   */
  source: CertificateSource | null;
}

interface CertificateSource { secret: Secret; parsed: ParsedCertificate }

export function createTLSCache(): TLSCache {
  return { servers: new Map(), coverage: new WeakMap() };
}

/** Drops the cached servers of hosts the topology no longer has. */
export function forgetHosts(cache: TLSCache, topo: Topology): void {
  if (topo.removed) {
    for (const h of topo.removed.hosts) cache.servers.delete(h);
    return;
  }
  const hosts = new Set(topo.hosts.map((e) => e.host));
  for (const h of [...cache.servers.keys()]) if (!hosts.has(h)) cache.servers.delete(h);
}

export interface TLSSelection {
  /** The servers of the topology's hosts, with their certificates. */
  servers: Server[];
  /** uid → certificate, sorted by uid. */
  certificates: Record<string, Certificate>;
  defaultCertificate: string | null;
}

export interface TLSInputs {
  store: StoreReader;
  readCertificate: (secretKey: string, secret: Secret) => CertificateResult;
  date: Date;
  warnings: ModelWarning[];
}

const NO_TLS = { certificate: null, tlsSecret: null } as const;

function covers(cache: TLSCache, parsed: ParsedCertificate, host: string): boolean {
  let m = cache.coverage.get(parsed);
  if (!m) cache.coverage.set(parsed, (m = new Map()));
  let v = m.get(host);
  if (v === undefined) m.set(host, (v = certificateCoversHost(parsed, host)));
  return v;
}

function hasTLS(frags: readonly IngressFragment[]): boolean {
  for (const f of frags) if (f.tls.length > 0) return true;
  return false;
}

/** The --default-ssl-certificate's uid (added to `certificates`), or null: the self-signed fallback. */
function defaultCertificateOf(inputs: TLSInputs, certificates: Record<string, Certificate>): string | null {
  const { store, warnings } = inputs;
  const key = store.options.defaultSSLCertificate;
  if (!key) return null;
  const secret = store.getSecret(key);
  const object = `Secret ${key}`;
  if (!secret) {
    warnings.push({ object, field: '', message: '--default-ssl-certificate: Secret not found; using the self-signed certificate' });
    return null;
  }
  const r = inputs.readCertificate(key, secret);
  if (!r.ok) {
    warnings.push({ object, field: '', message: `--default-ssl-certificate: ${r.reason}; using the self-signed certificate` });
    return null;
  }
  if (certificateExpired(r.value, inputs.date)) warnings.push({ object, field: '', message: `--default-ssl-certificate expired at ${r.value.certificate.notAfter}` });
  certificates[r.value.certificate.uid] = r.value.certificate;
  return r.value.certificate.uid;
}

/** The servers of the topology's hosts with this build's certificates. */
export function selectTLS(cache: TLSCache, hosts: readonly HostEntry[], inputs: TLSInputs): TLSSelection {
  const { store, readCertificate, date, warnings } = inputs;
  const certificates: Record<string, Certificate> = {};
  const defaultCertificate = defaultCertificateOf(inputs, certificates);

  /** The certificate of a host: the oldest Ingress of the host with a TLS section decides, as in ingress-nginx. */
  function tlsFor(host: string, frags: readonly IngressFragment[]): { certificate: string | null; tlsSecret: string | null; source?: CertificateSource } {
    if (host === DEFAULT_SERVER) return { certificate: defaultCertificate, tlsSecret: null };
    // A host with TLS but no usable Secret keeps HTTPS (and ssl-redirect) with the default certificate.
    const fallback = { certificate: defaultCertificate ?? FALLBACK_UID, tlsSecret: null };
    const f = frags.find((x) => x.tls.length > 0);
    if (!f) return NO_TLS;
    const ns = f.ref.namespace;
    const lower = host.toLowerCase();
    let index = f.tls.findIndex((t) => (t.hosts ?? []).some((h) => h.toLowerCase() === lower));
    if (index < 0) index = f.tls.findIndex((t) => (t.hosts ?? []).length === 0 && !!t.secretName);
    const named = index >= 0;
    if (index < 0) {
      index = f.tls.findIndex((t) => {
        if (!t.secretName) return false;
        const s = store.getSecret(`${ns}/${t.secretName}`);
        const r = s ? readCertificate(`${ns}/${t.secretName}`, s) : null;
        return r?.ok === true && covers(cache, r.value, host);
      });
    }
    // A host its Ingress's TLS section does not name, and no certificate of it covers, has no TLS
    // (ingress-nginx gives it the default certificate and so redirects it: its issue #3258).
    if (index < 0) return NO_TLS;
    const secretName = f.tls[index]!.secretName ?? '';
    if (secretName === '') return fallback;
    const secretKey = `${ns}/${secretName}`;
    const bad = (reason: string) => {
      warnings.push({
        object: `Ingress ${f.key}`, field: `spec.tls[${index}].secretName`,
        message: `Secret ${secretKey}: ${reason}; host ${host} uses the default certificate`,
      });
      return fallback;
    };
    const secret = store.getSecret(secretKey);
    if (!secret) return bad('not found');
    const r = readCertificate(secretKey, secret);
    if (!r.ok) return bad(r.reason);
    if (!covers(cache, r.value, host)) return bad(`certificate is not valid for ${host} (it names ${r.value.certificate.hosts.join(', ') || 'no host'})`);
    if (certificateExpired(r.value, date)) return bad(`certificate expired at ${r.value.certificate.notAfter}`);
    certificates[r.value.certificate.uid] = r.value.certificate;
    return { certificate: r.value.certificate.uid, tlsSecret: secretKey, ...(named ? { source: { secret, parsed: r.value } } : {}) };
  }

  const servers = new Array<Server>(hosts.length);
  for (let i = 0; i < hosts.length; i++) {
    const { host, frags, base } = hosts[i]!;
    // Most hosts have no TLS section and keep their certificate-less server.
    if (host !== DEFAULT_SERVER && !hasTLS(frags)) {
      servers[i] = base;
      continue;
    }
    let e = cache.servers.get(host);
    // The same Ingresses naming the same Secret object: the same choice, unless the certificate expired since.
    const source = e?.base === base ? e.source : null;
    if (source && store.getSecret(e!.tlsSecret!) === source.secret && !certificateExpired(source.parsed, date)) {
      certificates[source.parsed.certificate.uid] = source.parsed.certificate;
      servers[i] = e!.server;
      continue;
    }
    const tls = tlsFor(host, frags);
    if (tls.certificate === null && tls.tlsSecret === null) {
      servers[i] = base;
      continue;
    }
    if (!e || e.base !== base || e.certificate !== tls.certificate || e.tlsSecret !== tls.tlsSecret) {
      e = { base, certificate: tls.certificate, tlsSecret: tls.tlsSecret, server: { ...base, certificate: tls.certificate, tlsSecret: tls.tlsSecret }, source: null };
      cache.servers.set(host, e);
    }
    e.source = tls.source ?? null;
    servers[i] = e.server;
  }

  const sorted: Record<string, Certificate> = {};
  for (const uid of Object.keys(certificates).sort()) sorted[uid] = certificates[uid]!;
  return { servers, certificates: sorted, defaultCertificate };
}

/** When the first certificate expires: a full build must check them again then. */
export function certificatesValidUntil(certificates: Readonly<Record<string, Certificate>>): number {
  let validUntil = Infinity;
  for (const c of Object.values(certificates)) {
    const t = Date.parse(c.notAfter);
    validUntil = Number.isNaN(t) ? -Infinity : Math.min(validUntil, t);
  }
  return validUntil;
}
