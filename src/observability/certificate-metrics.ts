// nginx_ingress_controller_ssl_expire_time_seconds and _ssl_certificate_info: one series per
// server with a certificate (and `_` with the default one), labelled as ingress-nginx does —
// without the controller_* labels, so they live in a registry of their own.
import { X509Certificate } from 'node:crypto';
import { Gauge, type Registry } from 'prom-client';
import type { Configuration } from '../model/core/types.js';

export interface CertificateFacts {
  notAfterSeconds: number;
  identifier: string;
  issuerOrganization: string;
  issuerCommonName: string;
  serialNumber: string;
  publicKeyAlgorithm: string;
}

/** Go's x509.PublicKeyAlgorithm names. */
const KEY_ALGORITHM: Record<string, string> = { rsa: 'RSA', ec: 'ECDSA', ed25519: 'Ed25519', dsa: 'DSA' };

function dnAttribute(dn: string, name: string): string {
  for (const line of dn.split('\n')) if (line.startsWith(`${name}=`)) return line.slice(name.length + 1);
  return '';
}

/** The facts of a PEM's first certificate, or null when it does not parse. */
export function certificateFacts(pem: string): CertificateFacts | null {
  let x: X509Certificate;
  try {
    x = new X509Certificate(pem);
  } catch {
    return null;
  }
  const serial = BigInt(`0x${x.serialNumber}`).toString();
  return {
    notAfterSeconds: Math.floor(Date.parse(x.validTo) / 1000),
    // ingress-nginx's SSLCert.Identifier(): the issuer's serialNumber attribute, '-', the serial.
    identifier: `${dnAttribute(x.issuer, 'serialNumber')}-${serial}`,
    issuerOrganization: dnAttribute(x.issuer, 'O'),
    issuerCommonName: dnAttribute(x.issuer, 'CN'),
    serialNumber: serial,
    publicKeyAlgorithm: KEY_ALGORITHM[x.publicKey.asymmetricKeyType ?? ''] ?? 'Unknown',
  };
}

export interface CertificateMetrics {
  /** Re-derives both families from the configuration NGINX now runs; expiry only while leading (as ingress-nginx). */
  update(config: Configuration, leader: boolean): void;
}

export function createCertificateMetrics(opts: { registry: Registry; controllerClass: string; fallbackPem: () => string | null }): CertificateMetrics {
  const expire = new Gauge({
    name: 'nginx_ingress_controller_ssl_expire_time_seconds',
    help: 'Number of seconds since 1970 to the SSL Certificate expire.\n\t\t\tAn example to check if this certificate will expire in 10 days is: "nginx_ingress_controller_ssl_expire_time_seconds < (time() + (10 * 24 * 3600))"',
    labelNames: ['namespace', 'class', 'host', 'secret_name', 'identifier'],
    registers: [opts.registry],
  });
  const info = new Gauge({
    name: 'nginx_ingress_controller_ssl_certificate_info',
    help: 'Hold all labels associated to a certificate',
    labelNames: ['namespace', 'class', 'host', 'secret_name', 'identifier', 'issuer_organization', 'issuer_common_name', 'serial_number', 'public_key_algorithm'],
    registers: [opts.registry],
  });
  const parsed = new Map<string, CertificateFacts | null>();
  const facts = (key: string, pem: () => string | null): CertificateFacts | null => {
    if (!parsed.has(key)) {
      const text = pem();
      parsed.set(key, text === null ? null : certificateFacts(text));
    }
    return parsed.get(key)!;
  };

  return {
    update(config, leader) {
      expire.reset();
      info.reset();
      const used = new Set<string>();
      for (const server of config.servers) {
        const uid = server.certificate ?? (server.hostname === '_' ? config.defaultCertificate : null);
        const cert = uid ? config.certificates[uid] : undefined;
        let f: CertificateFacts | null;
        let namespace = '';
        let secretName = '';
        if (cert) {
          used.add(cert.uid);
          f = facts(cert.uid, () => cert.pem);
          [namespace, secretName] = cert.secret.includes('/') ? cert.secret.split('/', 2) as [string, string] : ['', cert.secret];
        } else if (server.hostname === '_') {
          // The self-signed fallback, as ingress-nginx exports its fake certificate for `_`.
          f = facts('fallback', opts.fallbackPem);
        } else {
          continue;
        }
        if (!f) continue;
        const labels = { namespace, class: opts.controllerClass, host: server.hostname, secret_name: secretName, identifier: f.identifier };
        if (leader) expire.set(labels, f.notAfterSeconds);
        info.set({
          ...labels, issuer_organization: f.issuerOrganization, issuer_common_name: f.issuerCommonName,
          serial_number: f.serialNumber, public_key_algorithm: f.publicKeyAlgorithm,
        }, 1);
      }
      for (const key of parsed.keys()) if (key !== 'fallback' && !used.has(key)) parsed.delete(key);
    },
  };
}
