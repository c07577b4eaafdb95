// authtls group: client certificate authentication in the host's server block (NGINX checks the
// certificate in the handshake of the server the client named by SNI; a request whose Host is
// another server with client authentication gets 421 from NGINX itself), and the certificate's
// verdict, subject and issuer sent upstream from every location of the host. Settings that
// cannot be used close the host (403), as ingress-nginx does.
import { clientCertAuthOf } from '../../model/ingress/annotations/authtls.js';
import { pathUnderAny } from '../../model/ingress/annotations/site.js';
import { checkRegex } from '../../model/checks/pcre.js';
import type { Server } from '../../model/core/types.js';
import * as f from '../filters.js';
import { mayHoldControlBytes } from '../header-values.js';
import { secretFile, secretFilePath } from '../secret-files.js';
import { sslRedirectFlags } from './rewrite.js';
import type { RenderBlock, ServerContext } from './types.js';

const S = '        ';

/** match-cn as a quoted PCRE: spaces are fine inside the quotes, quotes and backslashes escaped. */
function matchCN(re: string): string {
  const r = checkRegex(re, { caseless: false });
  if (!r.ok) throw new f.RenderError('auth-tls-match-cn', `not a regular expression NGINX accepts: ${r.error}`);
  return f.quoteLiteral(re, 'auth-tls-match-cn');
}

const closed = (reason: string) => `\n${S}# client certificate settings unusable: ${f.comment(reason)}\n${S}return 403;\n`;

/**
 * The server's client authentication. The frame leaves out directives that throw, which here
 * would leave the host open: anything that cannot be printed closes it instead.
 */
function serverDirectives(c: ServerContext): string {
  const setting = c.server.tlsSettings?.authTLS ?? null;
  if (setting === null) return '';
  if ('error' in setting) return closed(setting.error);
  try {
    return clientAuthDirectives(c);
  } catch (err) {
    if (err instanceof f.RenderError) return closed(err.message);
    throw err;
  }
}

function clientAuthDirectives({ server, runtime }: ServerContext): string {
  const auth = clientCertAuthOf(server.tlsSettings?.authTLS ?? null)!;
  let out = `\n${S}ssl_client_certificate ${f.quoteLiteral(secretFilePath(runtime, auth.secret, 'ca.crt'), 'auth-tls-secret')};\n`
    + `${S}ssl_verify_client ${auth.verifyClient};\n`
    + `${S}ssl_verify_depth ${f.num(auth.verifyDepth, 'auth-tls-verify-depth')};\n`;
  if (auth.crl !== null) out += `${S}ssl_crl ${f.quoteLiteral(secretFilePath(runtime, auth.secret, 'ca.crl'), 'auth-tls-secret')};\n`;
  if (auth.errorPage !== '') {
    const target = f.redirectTarget(auth.errorPage, 'auth-tls-error-page');
    // 495 and 496 are answered before any phase runs, so no Lua could escape the value first.
    if (mayHoldControlBytes(target)) throw new f.RenderError('auth-tls-error-page', 'a variable a client fills (such as $uri) cannot be escaped in a certificate error page');
    out += `${S}error_page 495 496 = ${target};\n`;
  }
  if (auth.matchCN !== '') out += `${S}if ($ssl_client_s_dn !~ ${matchCN(auth.matchCN)}) {\n${S}    return 403 "client certificate unauthorized";\n${S}}\n`;
  return out;
}

export const authTLSBlock: RenderBlock = {
  group: 'authtls',
  applied: 'directives',
  location: {
    // A required certificate is only asked over HTTPS: plain HTTP to the host is always redirected
    // (but no-tls-redirect-locations, e.g. ACME challenges, which never lose their exemption).
    lua: ({ server, loc, settings }) => {
      const auth = clientCertAuthOf(server.tlsSettings?.authTLS ?? null);
      if (auth === null || auth.verifyClient !== 'on' || pathUnderAny(loc.path, settings.noTLSRedirectLocations)) return null;
      return { redirect: sslRedirectFlags(loc, true) };
    },
    headers: ({ server, hdr }) => {
      const auth = clientCertAuthOf(server.tlsSettings?.authTLS ?? null);
      if (auth === null) return null;
      return {
        lines: [
          ...(auth.passCertificateToUpstream ? [`${hdr} ssl-client-cert $ssl_client_escaped_cert`] : []),
          `${hdr} ssl-client-verify $ssl_client_verify`,
          `${hdr} ssl-client-subject-dn $ssl_client_s_dn`,
          `${hdr} ssl-client-issuer-dn $ssl_client_i_dn`,
        ],
      };
    },
  },
  server: { directives: serverDirectives },
  serverFiles(server: Server, runtime) {
    const auth = clientCertAuthOf(server.tlsSettings?.authTLS ?? null);
    if (auth === null) return [];
    return [secretFile(runtime, auth.secret, 'ca.crt', auth.ca), ...(auth.crl !== null ? [secretFile(runtime, auth.secret, 'ca.crl', auth.crl)] : [])];
  },
};
