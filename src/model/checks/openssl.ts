// Cipher and curve lists checked by the system OpenSSL that NGINX links, as NGINX applies them
// (ssl_ciphers → SSL_CTX_set_cipher_list, ssl_ecdh_curve → SSL_CTX_set1_curves_list, `auto` skipped),
// and PEM files (CA bundles, CRLs, DH parameters) loaded as NGINX loads them.
import { nginxCompat } from './native.js';
import { InvalidValue, MAX_VALUE_LENGTH, preview, type Check } from './validate.js';

const memo = new Map<string, boolean>();

function accepts(kind: 'ciphers' | 'curves', list: string): boolean {
  const key = `${kind}\u0000${list}`;
  let ok = memo.get(key);
  if (ok === undefined) {
    ok = nginxCompat().opensslAccepts(kind, list);
    if (memo.size > 256) memo.clear();
    memo.set(key, ok);
  }
  return ok;
}

export const opensslAcceptsCiphers = (list: string): boolean => accepts('ciphers', list);
export const opensslAcceptsCurves = (list: string): boolean => list === 'auto' || accepts('curves', list);

/** Whether NGINX would load this PEM text as ssl_dhparam / a CA bundle / ssl_crl. */
export const opensslLoadsPem = (kind: 'dhparam' | 'certificates' | 'crl', pem: string): boolean => nginxCompat().opensslLoads(kind, pem);

/**
 * An OpenSSL cipher list (`ssl_ciphers`, `proxy_ssl_ciphers`): OpenSSL's characters only, and
 * at least one cipher of which the local OpenSSL knows.
 */
export const opensslCipherList: Check<string> = (raw) => {
  const v = raw.trim();
  if (v.length > MAX_VALUE_LENGTH || !/^[A-Za-z0-9!+:@._=-]+$/.test(v)) throw new InvalidValue(`"${preview(v)}" is not an OpenSSL cipher list`);
  if (!opensslAcceptsCiphers(v)) throw new InvalidValue(`"${preview(v)}" is refused by the local OpenSSL (no cipher matches)`);
  return v;
};
