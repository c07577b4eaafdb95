// The http-level TLS settings of the ConfigMap that NGINX reads from files (ssl-dh-param,
// ssl-session-ticket-key), written beside nginx.conf (the ticket key readable by its owner
// only), and the client-certificate headers a client may not send itself.
import { join } from 'node:path';
import type { NginxSettings } from '../model/core/config/settings.js';
import type { AuxiliaryFile } from './blocks/types.js';
import * as f from './filters.js';
import type { NginxRuntime } from './runtime.js';

/** The headers auth-tls-* sends upstream: only NGINX may set them. */
const CLIENT_CERT_HEADERS = ['ssl-client-cert', 'ssl-client-verify', 'ssl-client-subject-dn', 'ssl-client-issuer-dn'];

const dhParamPath = (runtime: NginxRuntime) => join(runtime.prefix, 'ssl', 'dhparam.pem');
const ticketKeyPath = (runtime: NginxRuntime) => join(runtime.prefix, 'ssl', 'session-ticket.key');

/** Directives for the http block, one per line. */
export function httpTLSSettings(s: NginxSettings, runtime: NginxRuntime, clientAuth: boolean): string {
  let out = '';
  if (s.sslDHParam !== null) out += `    ssl_dhparam ${f.quoteLiteral(dhParamPath(runtime), 'ssl-dh-param')};\n`;
  if (s.sslSessionTicketKey !== '') out += `    ssl_session_ticket_key ${f.quoteLiteral(ticketKeyPath(runtime), 'ssl-session-ticket-key')};\n`;
  // A backend behind a host with client authentication trusts these headers; the same backend
  // may also be reachable through a host without it (printed only when a host has it). Behind a trusted proxy (use-forwarded-headers)
  // that proxy may be the one that checked the certificate, so they are kept.
  if (clientAuth && !s.useForwardedHeaders) out += `    more_clear_input_headers ${CLIENT_CERT_HEADERS.join(' ')};\n`;
  return out;
}

export function tlsSettingsFiles(s: NginxSettings, runtime: NginxRuntime): AuxiliaryFile[] {
  const out: AuxiliaryFile[] = [];
  if (s.sslDHParam !== null) out.push({ path: dhParamPath(runtime), content: s.sslDHParam.pem });
  if (s.sslSessionTicketKey !== '') out.push({ path: ticketKeyPath(runtime), content: Buffer.from(s.sslSessionTicketKey, 'base64').toString('latin1'), mode: 0o600, encoding: 'latin1' });
  return out;
}
