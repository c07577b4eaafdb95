// sslcipher group: the host's ssl_ciphers and ssl_prefer_server_ciphers in its server block
// (NGINX applies the server's after the SNI switch). The default server also carries the
// ConfigMap's ssl-reject-handshake: a handshake naming no host, or one no server has, is refused.
import * as f from '../filters.js';
import type { RenderBlock } from './types.js';

export const sslCipherBlock: RenderBlock = {
  group: 'sslcipher',
  applied: 'directives',
  server: {
    directives: ({ server, settings }) => {
      let out = '';
      if (server.hostname === '_' && settings.sslRejectHandshake) out += '        ssl_reject_handshake on;\n';
      const t = server.tlsSettings;
      if (t?.sslCiphers) out += `        ssl_ciphers ${f.opensslList(t.sslCiphers, 'ssl-ciphers')};\n`;
      if (t && t.sslPreferServerCiphers !== null) out += `        ssl_prefer_server_ciphers ${f.onoff(t.sslPreferServerCiphers, 'ssl-prefer-server-ciphers')};\n`;
      return out === '' ? '' : `\n${out}`;
    },
  },
};
