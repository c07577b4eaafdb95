// Where the files taken from Secrets by auth-tls-* and proxy-ssl-* are written beside nginx.conf:
// a folder per kind of file, then runtime.ts's secretFilePath (a directory per namespace, names
// escaped), so `team-x/ca` and `team/x-ca` never share a file. The same Secret always gives the
// same bytes for a key, so two annotations naming it share them.
import { secretFilePath as pathFor, type NginxRuntime } from './runtime.js';
import type { AuxiliaryFile } from './blocks/types.js';

export type SecretFile = 'ca.crt' | 'ca.crl' | 'tls.crt' | 'tls.key';

const PLACES: Record<SecretFile, readonly [folder: string, extension: string]> = {
  'ca.crt': ['ssl-ca', '.crt'], 'ca.crl': ['ssl-crl', '.crl'], 'tls.crt': ['ssl-cert', '.crt'], 'tls.key': ['ssl-key', '.key'],
};

export function secretFilePath(runtime: NginxRuntime, secret: string, file: SecretFile): string {
  const [folder, extension] = PLACES[file];
  return pathFor(runtime, folder, secret, extension);
}

/** A file from a Secret; private keys are readable by their owner only (NGINX's master reads them at load). */
export function secretFile(runtime: NginxRuntime, secret: string, file: SecretFile, content: string): AuxiliaryFile {
  return { path: secretFilePath(runtime, secret, file), content, ...(file === 'tls.key' ? { mode: 0o600 } : {}) };
}
