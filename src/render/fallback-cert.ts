// The self-signed certificate NGINX serves when no certificate matches a host (ingress-nginx's
// "Kubernetes Ingress Controller Fake Certificate"). Generated once per prefix with openssl.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FallbackCert } from './runtime.js';

const run = promisify(execFile);

/** Creates `<dir>/default-fake-certificate.{pem,key}` unless both exist; returns their paths. */
export async function ensureFallbackCertificate(dir: string, opts: { openssl?: string } = {}): Promise<FallbackCert> {
  const certPath = join(dir, 'default-fake-certificate.pem');
  const keyPath = join(dir, 'default-fake-certificate.key');
  if (existsSync(certPath) && existsSync(keyPath)) return { certPath, keyPath };
  mkdirSync(dir, { recursive: true });
  await run(opts.openssl ?? 'openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '3650',
    '-subj', '/O=Acme Co/CN=Kubernetes Ingress Controller Fake Certificate',
    '-addext', 'subjectAltName=DNS:ingress.local',
    '-keyout', keyPath, '-out', certPath,
  ], { timeout: 30_000 });
  // A root master runs workers as nobody; only the master reads the key, at (re)load.
  chmodSync(keyPath, 0o600);
  return { certPath, keyPath };
}
