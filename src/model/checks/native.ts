// Loads the native addon built from native/nginx-compat.c (scripts/build-native.sh): PCRE2 and
// OpenSSL answers from the libraries NGINX itself links. Loaded once, on first use.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { REPO_ROOT } from '../../version.js';

export interface NginxCompat {
  /** null: compiles; [message, offset]: PCRE2's error; { names }: compiles, with named groups. */
  pcreCompile(pattern: string, caseless: boolean): null | [string, number] | { names: string[] };
  /**
   * Whether PCRE2, interpreted as NGINX runs a location's regex, decides `subject` within `limit`
   * backtracking steps; null when the pattern does not compile.
   */
  pcreWithinLimit(pattern: string, caseless: boolean, subject: string, limit: number): boolean | null;
  /** Whether SSL_CTX_set_cipher_list (`ciphers`) or SSL_CTX_set1_curves_list (`curves`) accepts the list. */
  opensslAccepts(kind: 'ciphers' | 'curves', list: string): boolean;
  /**
   * Whether PEM text loads as NGINX loads the file: `dhparam` (ssl_dhparam, within the system
   * OpenSSL's security level), `certificates` (ssl_client_certificate,
   * proxy_ssl_trusted_certificate), `crl` (ssl_crl).
   */
  opensslLoads(kind: 'dhparam' | 'certificates' | 'crl', pem: string): boolean;
  /** The names of the ciphers SSL_CTX_set_cipher_list enables for a list (TLS 1.3 suites too); [] when it refuses it. */
  opensslCipherNames(list: string): string[];
  pcreVersion: string;
}

export const NATIVE_ADDON_PATH = join(REPO_ROOT, 'build', 'native', 'nginx-compat.node');

let addon: NginxCompat | Error | undefined;

/** The addon, or throws saying how to build it. */
export function nginxCompat(): NginxCompat {
  if (addon === undefined) {
    try {
      addon = createRequire(import.meta.url)(NATIVE_ADDON_PATH) as NginxCompat;
    } catch (err) {
      addon = new Error(`the native checks (${NATIVE_ADDON_PATH}) are not built: run scripts/setup.sh (${(err as Error).message.split('\n')[0]})`);
    }
  }
  if (addon instanceof Error) throw addon;
  return addon;
}
