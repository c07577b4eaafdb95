// What the client-certificate (auth-tls-secret) and backend-TLS (proxy-ssl-secret) annotations
// read from a Secret: the CA bundle `ca.crt`, the revocation list `ca.crl`, and the key pair
// `tls.crt`/`tls.key`, each checked as NGINX will load the file written from it, and the
// reference itself (same namespace unless allow-cross-namespace-resources).
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { Secret } from '../../store/kube-types.js';
import { secretRef } from '../../store/secret-ref.js';
import type { StoreReader } from '../../store/types.js';
import { opensslLoadsPem } from './openssl.js';
import { InvalidValue, type Check } from './validate.js';

/** A CA bundle, a CRL or a key file larger than this is refused (NGINX would load it at every reload). */
export const MAX_PEM_BYTES = 1024 * 1024;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n[A-Za-z0-9+/=\r\n]+?-----END \1-----/g;

function secretText(secret: Secret, key: string): string | undefined {
  const plain = secret.stringData?.[key];
  if (plain !== undefined) return plain;
  const b64 = secret.data?.[key];
  return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
}

/** The PEM blocks of `type` in `text`, each ending with a newline; other text is dropped. */
function pemBlocks(text: string, type: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(PEM_BLOCK)) if (m[1] === type) out.push(`${m[0].replace(/\r/g, '')}\n`);
  return out;
}

/**
 * `ca.crt` as the file NGINX reads: every certificate of the bundle parsed (X.509, not expired
 * or not does not matter, as for NGINX), written back one after the other without the text in
 * between. Throws InvalidValue naming what is wrong.
 */
export function caBundle(secret: Secret): string | undefined {
  const text = secretText(secret, 'ca.crt');
  if (text === undefined || text.trim() === '') return undefined;
  if (text.length > MAX_PEM_BYTES) throw new InvalidValue(`data["ca.crt"] is larger than ${MAX_PEM_BYTES} bytes`);
  const blocks = pemBlocks(text, 'CERTIFICATE');
  if (blocks.length === 0) throw new InvalidValue('data["ca.crt"] holds no PEM certificate');
  let pem = '';
  blocks.forEach((block, i) => {
    try {
      pem += new X509Certificate(block).toString();
    } catch (err) {
      throw new InvalidValue(`certificate ${i + 1} of data["ca.crt"] is not X.509 (${(err as Error).message})`);
    }
  });
  if (!opensslLoadsPem('certificates', pem)) throw new InvalidValue('data["ca.crt"] is refused by the local OpenSSL');
  return pem;
}

/** `ca.crl` (optional) as NGINX's ssl_crl loads it. */
export function crlFile(secret: Secret): string | undefined {
  const text = secretText(secret, 'ca.crl');
  if (text === undefined || text.trim() === '') return undefined;
  if (text.length > MAX_PEM_BYTES) throw new InvalidValue(`data["ca.crl"] is larger than ${MAX_PEM_BYTES} bytes`);
  const pem = pemBlocks(text, 'X509 CRL').join('');
  if (pem === '' || !opensslLoadsPem('crl', pem)) throw new InvalidValue('data["ca.crl"] is not a PEM certificate revocation list NGINX loads');
  return pem;
}

export interface KeyPair {
  /** tls.crt: the certificate and any chain after it. */
  readonly cert: string;
  readonly key: string;
}

/** `tls.crt` + `tls.key` when the Secret has them (the key must match the certificate); undefined without either. */
export function keyPair(secret: Secret): KeyPair | undefined {
  const crt = secretText(secret, 'tls.crt');
  const key = secretText(secret, 'tls.key');
  if (crt === undefined && key === undefined) return undefined;
  if (!crt?.trim()) throw new InvalidValue('data["tls.crt"] is missing or empty');
  if (!key?.trim()) throw new InvalidValue('data["tls.key"] is missing or empty');
  if (crt.length > MAX_PEM_BYTES || key.length > MAX_PEM_BYTES) throw new InvalidValue(`data["tls.crt"] or data["tls.key"] is larger than ${MAX_PEM_BYTES} bytes`);
  const certs = pemBlocks(crt, 'CERTIFICATE');
  const keyBlock = /-----BEGIN ((?:RSA |EC )?PRIVATE KEY)-----\r?\n[A-Za-z0-9+/=\r\n]+?-----END \1-----/.exec(key);
  if (certs.length === 0) throw new InvalidValue('data["tls.crt"] holds no PEM certificate');
  if (keyBlock === null) throw new InvalidValue('data["tls.key"] holds no unencrypted PEM private key');
  let x509: X509Certificate;
  let privateKey;
  try {
    x509 = new X509Certificate(certs[0]!);
    for (const c of certs.slice(1)) new X509Certificate(c);
  } catch (err) {
    throw new InvalidValue(`data["tls.crt"] is not X.509 (${(err as Error).message})`);
  }
  try {
    privateKey = createPrivateKey(keyBlock[0]);
  } catch (err) {
    throw new InvalidValue(`data["tls.key"] is not a PEM private key (${(err as Error).message})`);
  }
  if (!x509.checkPrivateKey(privateKey)) throw new InvalidValue('data["tls.key"] does not match the certificate in data["tls.crt"]');
  return { cert: certs.join(''), key: `${keyBlock[0].replace(/\r/g, '')}\n` };
}

/** An annotation naming a Secret: `name` or `namespace/name`. */
export function secretReference(annotation: string): Check<string> {
  return (raw) => {
    const ref = secretRef(raw.trim(), '');
    if (ref === undefined) throw new InvalidValue(`${annotation} must be \`name\` or \`namespace/name\` of a Secret`);
    return ref;
  };
}

/**
 * What `read` takes from the Secret an annotation names (see referencedSecret): its key and the
 * value, or InvalidValue thrown with the Secret named in the message.
 */
export function fromReferencedSecret<T>(ref: string, ingressNamespace: string, store: StoreReader, allowCrossNamespace: boolean, read: (secret: Secret, key: string) => T): { key: string; value: T } {
  const found = referencedSecret(ref, ingressNamespace, store, allowCrossNamespace);
  try {
    return { key: found.key, value: read(found.secret, found.key) };
  } catch (err) {
    if (err instanceof InvalidValue && !err.message.startsWith(`Secret ${found.key}`)) throw new InvalidValue(`Secret ${found.key}: ${err.message}`);
    throw err;
  }
}

/**
 * The Secret an annotation names (a reference from secretReference), from the Ingress's own
 * namespace unless allow-cross-namespace-resources. Throws InvalidValue (why it cannot be used).
 */
export function referencedSecret(ref: string, ingressNamespace: string, store: StoreReader, allowCrossNamespace: boolean): { key: string; secret: Secret } {
  const key = ref.startsWith('/') ? `${ingressNamespace}${ref}` : ref;
  const ns = key.slice(0, key.indexOf('/'));
  if (ns !== ingressNamespace && !allowCrossNamespace) {
    throw new InvalidValue(`Secret ${key} is in another namespace and allow-cross-namespace-resources is false`);
  }
  const secret = store.getSecret(key);
  if (secret === undefined) throw new InvalidValue(`Secret ${key} not found`);
  return { key, secret };
}
