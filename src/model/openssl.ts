// Cipher and curve lists checked by the system OpenSSL that NGINX links, as NGINX applies them
// (ssl_ciphers → SSL_CTX_set_cipher_list, ssl_ecdh_curve → SSL_CTX_set1_curves_list, `auto` skipped).
import { nginxCompat } from './native.js';

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
