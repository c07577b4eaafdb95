// A host's TLS settings from its Ingresses' annotations (oldest first), as ingress-nginx takes
// them: client-certificate auth (auth-tls-*) and ssl-ciphers / ssl-prefer-server-ciphers from
// the oldest Ingress that sets each, backend TLS (proxy-ssl-*) from the oldest with a CA bundle.
// A newer Ingress that asks for other client-certificate settings is told it does not get them.
// Unusable client-certificate settings (a missing Secret, no ca.crt, …) close the whole host only
// when they are the host's oldest Ingress's; a newer Ingress's close its own paths alone (its
// parser denies them), so one Ingress added to a shared host cannot take the others down.
import { clientCertAuthOf, type AuthTLSSetting } from './annotations/authtls.js';
import type { ProxySSLConfig } from './annotations/proxyssl.js';
import type { IngressFragment } from './fragments.js';
import type { ModelWarning, ServerTLSSettings } from '../core/types.js';

/** The host's settings, or undefined when none of its Ingresses sets any (most hosts). */
export function serverTLSSettings(host: string, fragments: readonly IngressFragment[], warnings: ModelWarning[]): ServerTLSSettings | undefined {
  let authTLS: IngressFragment | undefined;
  let proxySSL: ProxySSLConfig | null = null;
  let sslCiphers = '';
  let sslPreferServerCiphers: boolean | null = null;
  for (const f of fragments) {
    const p = f.parsed;
    if (p.authTLS !== null && 'error' in p.authTLS && f !== fragments[0]) {
      warnings.push({
        object: `Ingress ${f.key}`, field: 'metadata.annotations',
        message: `client-certificate settings cannot be used (${p.authTLS.error}); this Ingress's paths on host ${host} are closed, the host's other Ingresses keep serving`,
      });
    } else if (p.authTLS !== null) {
      if (authTLS === undefined) authTLS = f;
      else if (differs(authTLS.parsed.authTLS, p.authTLS) && clientCertAuthOf(p.authTLS) !== null) {
        warnings.push({
          object: `Ingress ${f.key}`, field: 'metadata.annotations',
          message: `host ${host} already takes its client-certificate settings (auth-tls-*) from the older Ingress ${authTLS.key}; this Ingress's are not used`,
        });
      }
    }
    if (proxySSL === null && p.proxySSL?.ca) proxySSL = p.proxySSL;
    if (sslCiphers === '') sslCiphers = p.sslCiphers;
    if (sslPreferServerCiphers === null) sslPreferServerCiphers = p.sslPreferServerCiphers;
  }
  if (authTLS === undefined && proxySSL === null && sslCiphers === '' && sslPreferServerCiphers === null) return undefined;
  return { authTLS: authTLS?.parsed.authTLS ?? null, proxySSL, sslCiphers, sslPreferServerCiphers };
}

function differs(a: AuthTLSSetting | null, b: AuthTLSSetting | null): boolean {
  if (a === b) return false;
  const x = clientCertAuthOf(a);
  const y = clientCertAuthOf(b);
  if (x === null || y === null) return true;
  return x.ca !== y.ca || x.crl !== y.crl || x.verifyClient !== y.verifyClient || x.verifyDepth !== y.verifyDepth
    || x.errorPage !== y.errorPage || x.passCertificateToUpstream !== y.passCertificateToUpstream || x.matchCN !== y.matchCN;
}
