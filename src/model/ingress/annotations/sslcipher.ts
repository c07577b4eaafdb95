// sslcipher group: the host's TLS ciphers and cipher preference (ssl_ciphers and
// ssl_prefer_server_ciphers in its server block, over the ConfigMap's). NGINX applies a server's
// own settings after the SNI callback switched to it: a client that names no host, or another,
// gets that server's.
import { opensslCipherList } from '../../checks/openssl.js';
import { bool } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';
import { http2TlsProblem } from '../../checks/http2.js';

const keys = { 'ssl-ciphers': 'Low', 'ssl-prefer-server-ciphers': 'Low' } as const;

export interface SslCipherValue {
  /** '' keeps the ConfigMap's ssl-ciphers. */
  readonly sslCiphers: string;
  /** null keeps the ConfigMap's ssl-prefer-server-ciphers. */
  readonly sslPreferServerCiphers: boolean | null;
}

const fields = { sslCiphers: 'server', sslPreferServerCiphers: 'server' } as const;

export const sslCipherGroup: AnnotationGroup<SslCipherValue, typeof fields> = {
  name: 'sslcipher',
  keys,
  fields,
  docs: {
    'ssl-ciphers': { values: 'OpenSSL cipher list (the local OpenSSL must know one of them)', default: 'ConfigMap ssl-ciphers', description: 'ssl_ciphers of the host (TLS 1.2 and older; TLS 1.3 suites are not affected).' },
    'ssl-prefer-server-ciphers': { values: '"true" or "false"', default: 'ConfigMap ssl-prefer-server-ciphers', description: 'ssl_prefer_server_ciphers of the host.' },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const sslCiphers = r.get('ssl-ciphers', opensslCipherList, '');
    // With protocols HTTP/2 cannot have, the ConfigMap's ssl-protocols is warned already.
    const http2 = ctx.settings.useHttp2 && sslCiphers !== '' ? http2TlsProblem(ctx.settings.sslProtocols, sslCiphers, { protocols: 'ssl-protocols', ciphers: 'ssl-ciphers' }) : null;
    if (http2?.key === 'ssl-ciphers') r.warn('ssl-ciphers', http2.message);
    return {
      sslCiphers,
      sslPreferServerCiphers: r.get<boolean | null>('ssl-prefer-server-ciphers', bool, null),
    };
  },
};
