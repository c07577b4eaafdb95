// What NGINX accepts but HTTP/2 clients cannot get, found when the value is read so that users
// are told before browsers fail: Lua APIs lua-nginx-module refuses inside an HTTP/2 request (in a
// snippet: that request answers 500), and TLS settings under which HTTP/2 clients refuse the
// connection NGINX offers h2 on (RFC 9113 §9.2: TLS 1.2 or later, and with TLS 1.2 an ephemeral
// key exchange with an AEAD cipher). Only while use-http2 is on; HTTP/1.1 clients are served.
import { nginxCompat } from './native.js';

/** How every such warning begins: a warning, never a refusal (src/admission/verdict.ts). */
export const HTTP2_FAILURE = 'fails for HTTP/2 clients: ';

// ngx.location.capture*, ngx.req.socket and ngx.req.raw_header raise "http2 requests not
// supported yet" (lua-nginx-module 0.10.23).
const REFUSED_IN_HTTP2 = /\bngx\.(location\.capture(?:_multi)?|req\.socket|req\.raw_header)\b/;

/** The first call in a snippet of a Lua API lua-nginx-module refuses inside an HTTP/2 request, as a warning message; or null. */
export function http2LuaProblem(snippet: string): string | null {
  const m = REFUSED_IN_HTTP2.exec(snippet);
  if (!m) return null;
  const line = snippet.slice(0, m.index).split('\n').length;
  return `${HTTP2_FAILURE}line ${line}: lua-nginx-module refuses ngx.${m[1]} inside an HTTP/2 request (those requests answer 500)`;
}

/** A TLS 1.2 cipher (OpenSSL's name) HTTP/2 allows: ECDHE or DHE key exchange, AEAD encryption. */
const HTTP2_TLS12_CIPHER = /^(ECDHE|DHE)-\w+-(AES(128|256)-GCM-SHA(256|384)|CHACHA20-POLY1305|AES(128|256)-CCM8?)$/;

const allowsHttp2 = new Map<string, boolean>();

/**
 * Why HTTP/2 clients refuse every connection under these ssl-protocols and ssl-ciphers, as a
 * warning message naming `what` (the key), or null. With TLS 1.3 allowed they can always have it.
 */
export function http2TlsProblem(protocols: readonly string[], ciphers: string, what: { protocols: string; ciphers: string }): { key: string; message: string } | null {
  if (protocols.includes('TLSv1.3')) return null;
  if (!protocols.includes('TLSv1.2')) {
    return { key: what.protocols, message: `${HTTP2_FAILURE}neither TLSv1.2 nor TLSv1.3 is allowed (${protocols.join(' ')}), and HTTP/2 needs one: clients refuse the connection` };
  }
  let ok = allowsHttp2.get(ciphers);
  if (ok === undefined) {
    ok = nginxCompat().opensslCipherNames(ciphers).some((c) => HTTP2_TLS12_CIPHER.test(c));
    if (allowsHttp2.size > 256) allowsHttp2.clear();
    allowsHttp2.set(ciphers, ok);
  }
  return ok ? null : {
    key: what.ciphers,
    message: `${HTTP2_FAILURE}with TLSv1.3 off, HTTP/2 needs an ECDHE or DHE cipher with GCM, CHACHA20-POLY1305 or CCM, and "${ciphers.slice(0, 80)}" has none: clients refuse the connection (INADEQUATE_SECURITY)`,
  };
}
