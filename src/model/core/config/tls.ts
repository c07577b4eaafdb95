// The ConfigMap's TLS keys whose values need more than a pattern: the session ticket key (NGINX
// takes a file of exactly 48 or 80 bytes) and the DH parameters read from a Secret (loaded as
// NGINX's ssl_dhparam loads them, within the system OpenSSL's security level).
import type { Secret } from '../../../store/kube-types.js';
import { opensslLoadsPem } from '../../checks/openssl.js';
import { InvalidValue, type Check } from '../../checks/validate.js';

/** ssl-session-ticket-key: standard base64 of 48 or 80 bytes (`openssl rand 80 | openssl enc -A -base64`). */
export const sessionTicketKey: Check<string> = (raw) => {
  const v = raw.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(v) || v.length % 4 !== 0) throw new InvalidValue('not standard base64');
  const bytes = Buffer.from(v, 'base64').length;
  if (bytes !== 48 && bytes !== 80) throw new InvalidValue(`decodes to ${bytes} bytes; NGINX takes 48 or 80`);
  return v;
};

/** ssl-dh-param: `dhparam.pem` of the Secret, a PEM "DH PARAMETERS" block NGINX loads. */
export function dhParamFromSecret(secret: Secret, ref: string): { secret: string; pem: string } {
  const b64 = secret.data?.['dhparam.pem'];
  const text = b64 !== undefined ? Buffer.from(b64, 'base64').toString('utf8') : secret.stringData?.['dhparam.pem'];
  if (text === undefined || text.trim() === '') throw new InvalidValue(`Secret ${ref} has no data["dhparam.pem"]`);
  const m = /-----BEGIN DH PARAMETERS-----\r?\n[A-Za-z0-9+/=\r\n]+?-----END DH PARAMETERS-----/.exec(text);
  if (!m) throw new InvalidValue(`data["dhparam.pem"] of Secret ${ref} holds no PEM "DH PARAMETERS" block`);
  const pem = `${m[0].replace(/\r/g, '')}\n`;
  if (!opensslLoadsPem('dhparam', pem)) throw new InvalidValue(`the DH parameters of Secret ${ref} are refused by the local OpenSSL (too small for its security level, or broken)`);
  return { secret: ref, pem };
}
