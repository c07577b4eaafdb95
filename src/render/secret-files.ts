// Where the files taken from Secrets are written beside nginx.conf: a directory per namespace
// and one per Secret under it (names escaped by pathComponent), so `team-x/ca` and `team/x-ca`
// never share a file; inside, the Secret's key names (ca.crt, ca.crl, tls.crt, tls.key). The
// same Secret always gives the same bytes for a key, so two annotations naming it share them.
import { join } from 'node:path';
import { pathComponent, type NginxRuntime } from './runtime.js';
import type { AuxiliaryFile } from './blocks/types.js';

export type SecretFile = 'ca.crt' | 'ca.crl' | 'tls.crt' | 'tls.key';

export function secretFilePath(runtime: NginxRuntime, secret: string, file: SecretFile): string {
  const slash = secret.indexOf('/');
  return join(runtime.prefix, 'ssl', 'secrets', pathComponent(secret.slice(0, slash)), pathComponent(secret.slice(slash + 1)), file);
}

/** A file from a Secret; private keys are readable by their owner only (NGINX's master reads them at load). */
export function secretFile(runtime: NginxRuntime, secret: string, file: SecretFile, content: string): AuxiliaryFile {
  return { path: secretFilePath(runtime, secret, file), content, ...(file === 'tls.key' ? { mode: 0o600 } : {}) };
}
