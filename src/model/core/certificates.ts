// TLS Secrets → certificates: reads tls.crt/tls.key, checks the key belongs to the certificate,
// and answers whether a certificate serves a host on a given date. Parsing is memoised per
// Secret object, so an unchanged Secret is never parsed twice.
import { X509Certificate, createHash, createPrivateKey } from 'node:crypto';
import type { Secret } from '../../store/kube-types.js';
import type { Certificate } from './types.js';
import { MAX_PEM_BYTES } from '../checks/tls-secrets.js';

export interface ParsedCertificate {
  certificate: Certificate;
  x509: X509Certificate;
  notAfter: Date;
}

export type CertificateResult = { ok: true; value: ParsedCertificate } | { ok: false; reason: string };

const TLS_TYPES = new Set(['kubernetes.io/tls', 'Opaque', '']);

function secretValue(secret: Secret, key: string): string | undefined {
  const plain = secret.stringData?.[key];
  if (plain !== undefined) return plain;
  const b64 = secret.data?.[key];
  if (b64 === undefined) return undefined;
  return Buffer.from(b64, 'base64').toString('utf8');
}

function withNewline(s: string): string {
  return s.endsWith('\n') ? s : `${s}\n`;
}

/** DNS names of a certificate: its DNS SANs, or its subject CN when it has none. */
function certificateHosts(x509: X509Certificate): string[] {
  const sans = (x509.subjectAltName ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4));
  if (sans.length > 0) return sans;
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(x509.subject);
  return cn ? [cn[1]!] : [];
}

/** Parses a TLS Secret; `secretKey` is `namespace/name`. */
export function parseTLSSecret(secretKey: string, secret: Secret): CertificateResult {
  const type = secret.type ?? '';
  if (!TLS_TYPES.has(type)) return { ok: false, reason: `type ${type} is not kubernetes.io/tls` };
  const crt = secretValue(secret, 'tls.crt');
  const key = secretValue(secret, 'tls.key');
  if (!crt) return { ok: false, reason: 'data["tls.crt"] is missing or empty' };
  if (!key) return { ok: false, reason: 'data["tls.key"] is missing or empty' };
  // Every byte is held, posted to Lua and kept in each worker: a tenant's chain is bounded.
  if (crt.length > MAX_PEM_BYTES || key.length > MAX_PEM_BYTES) return { ok: false, reason: `data["tls.crt"] or data["tls.key"] is larger than ${MAX_PEM_BYTES} bytes` };
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(crt);
  } catch (err) {
    return { ok: false, reason: `data["tls.crt"] is not a PEM certificate (${(err as Error).message})` };
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    return { ok: false, reason: `data["tls.key"] is not a PEM private key (${(err as Error).message})` };
  }
  if (!x509.checkPrivateKey(privateKey)) {
    return { ok: false, reason: 'data["tls.key"] does not match the certificate in data["tls.crt"]' };
  }
  const pem = withNewline(crt) + withNewline(key);
  const notAfter = new Date(x509.validTo);
  return {
    ok: true,
    value: {
      x509,
      notAfter,
      certificate: {
        uid: createHash('sha256').update(pem).digest('hex').slice(0, 32),
        secret: secretKey,
        pem,
        hosts: certificateHosts(x509),
        notAfter: notAfter.toISOString(),
      },
    },
  };
}

/** A memoising reader of TLS Secrets (one per model builder). */
export function createCertificateCache(): (secretKey: string, secret: Secret) => CertificateResult {
  const cache = new WeakMap<Secret, CertificateResult>();
  return (secretKey, secret) => {
    let r = cache.get(secret);
    if (!r || (r.ok && r.value.certificate.secret !== secretKey)) {
      r = parseTLSSecret(secretKey, secret);
      cache.set(secret, r);
    }
    return r;
  };
}

/** Whether the certificate names `host` (SAN, or CN without SANs; wildcards allowed). */
export function certificateCoversHost(parsed: ParsedCertificate, host: string): boolean {
  return parsed.x509.checkHost(host) !== undefined;
}

export function certificateExpired(parsed: ParsedCertificate, now: Date): boolean {
  return parsed.notAfter.getTime() < now.getTime();
}
