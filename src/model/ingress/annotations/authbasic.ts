// authbasic group: HTTP basic/digest authentication with users from a Secret (an htpasswd file
// under key `auth`, or a user → hash map). A missing Secret or `auth` key denies the location;
// entries that are not user:hash match no password (401), as in ingress-nginx. A broken Secret
// never leaves the location open.
import type { Secret } from '../../../store/kube-types.js';
import { InvalidValue, oneOf, preview, safeString, type Check } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import { pathUnderAny } from './site.js';
import type { AnnotationGroup } from './types.js';
import { secretRef } from '../../../store/secret-ref.js';

const keys = {
  'auth-type': 'Low',
  'auth-secret': 'Medium',
  'auth-secret-type': 'Low',
  'auth-realm': 'Medium',
} as const;

/** `name` or `namespace/name` of a Secret, as `namespace/name` (the namespace is filled in later). */
const secretReference: Check<string> = (raw) => {
  const ref = secretRef(raw, '');
  if (ref === undefined) throw new InvalidValue('auth-secret must be `name` or `namespace/name` of a Secret');
  return ref;
};

const authType = oneOf(['basic', 'digest'] as const);
const authSecretType = oneOf(['auth-file', 'auth-map'] as const);

const USER = /^[^:\s\u0000-\u001f\u007f]{1,256}$/;
const HASH = /^[\u0021-\u007e]{1,1024}$/;

/**
 * The htpasswd lines (`user:hash`, or `user:realm:hash` for digest) of a file, and the numbers of
 * the lines that are not such a line. NGINX would match no password against those (ingress-nginx
 * writes them as they are, and answers 401); here they are left out of the file NGINX reads.
 */
export function htpasswdLines(text: string): { users: string[]; skipped: number[] } {
  const users: string[] = [];
  const skipped: number[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '' || line.startsWith('#')) return;
    const sep = line.indexOf(':');
    if (sep < 0 || !USER.test(line.slice(0, sep)) || !HASH.test(line.slice(sep + 1))) skipped.push(i + 1);
    else users.push(line);
  });
  return { users, skipped };
}

function secretValue(secret: Secret, key: string): string | undefined {
  const b64 = secret.data?.[key];
  if (b64 !== undefined) return Buffer.from(b64, 'base64').toString('utf8');
  return secret.stringData?.[key];
}

/** The users of the Secret, and what in it no password can match (said in a warning). */
function usersFromSecret(secret: Secret, type: BasicAuthConfig['secretType']): { users: string[]; unusable: string | null } {
  if (type === 'auth-file') {
    const file = secretValue(secret, 'auth');
    if (file === undefined) throw new InvalidValue('the Secret has no `auth` key');
    const { users, skipped } = htpasswdLines(file);
    if (skipped.length > 0) return { users, unusable: `line${skipped.length > 1 ? 's' : ''} ${skipped.slice(0, 10).join(', ')} of the htpasswd file ${skipped.length > 1 ? 'are' : 'is'} not user:hash` };
    return { users, unusable: users.length === 0 ? 'the htpasswd file has no users' : null };
  }
  const names = [...new Set([...Object.keys(secret.data ?? {}), ...Object.keys(secret.stringData ?? {})])].sort();
  const users: string[] = [];
  const bad: string[] = [];
  for (const user of names) {
    const hash = (secretValue(secret, user) ?? '').trim();
    if (USER.test(user) && HASH.test(hash)) users.push(`${user}:${hash}`);
    else bad.push(preview(user));
  }
  if (bad.length > 0) return { users, unusable: `entries ${bad.slice(0, 10).map((u) => `"${u}"`).join(', ')} of the auth-map Secret are not user → hash` };
  return { users, unusable: users.length === 0 ? 'the auth-map Secret has no users' : null };
}

export interface BasicAuthConfig {
  readonly type: 'basic' | 'digest';
  readonly realm: string;
  /** `namespace/name` of the auth Secret. */
  readonly secret: string;
  readonly secretType: 'auth-file' | 'auth-map';
  /** htpasswd lines (user:hash) taken from the Secret, validated. */
  readonly users: readonly string[];
}

export interface BasicAuthValue {
  readonly basicAuth: BasicAuthConfig | null;
}

const fields = { basicAuth: 'location' } as const;

export const authBasicGroup: AnnotationGroup<BasicAuthValue, typeof fields> = {
  name: 'authbasic',
  keys,
  fields,
  secrets: ['auth-secret'],
  perRequest: ({ basicAuth }) => (basicAuth === null ? null : `auth-type ${basicAuth.type} needs NGINX's auth_${basicAuth.type}`),
  atLocation: {
    // no-auth-locations (default: ACME challenges) are open.
    basicAuth: (auth, site) => (auth && !pathUnderAny(site.path, site.settings.noAuthLocations) ? auth : null),
  },
  docs: {
    'auth-type': { values: '"basic" or "digest"', default: 'none', description: 'Protect the location with HTTP authentication.', onInvalid: 'warning; the location is denied (503)' },
    'auth-secret': { values: '`name` or `namespace/name` of a Secret (another namespace only with allow-cross-namespace-resources)', default: 'none', description: 'Secret holding the users.', onInvalid: 'warning; the location is denied (503) — also when the Secret or its `auth` key is missing; entries that are not user:hash are warned about and match no password (401)' },
    'auth-secret-type': { values: '"auth-file" or "auth-map"', default: 'auth-file', description: '`auth-file`: htpasswd file under key `auth`; `auth-map`: one key per user, value the hash.', onInvalid: 'warning; the location is denied (503)' },
    'auth-realm': { values: 'string without quotes, `;`, braces, `$`, backslash', default: "''", description: 'Realm shown in the authentication prompt.' },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const type = r.read('auth-type', authType);
    if (type.state === 'absent') {
      if (r.has('auth-secret')) warn('auth-secret', 'auth-secret is ignored without auth-type');
      return { basicAuth: null, denied: null };
    }
    const deny = (reason: string) => ({ basicAuth: null, denied: reason });
    if (type.state === 'invalid') return deny(`annotation auth-type: ${type.message}`);

    const secretType = r.read('auth-secret-type', authSecretType);
    if (secretType.state === 'invalid') return deny(`annotation auth-secret-type: ${secretType.message}`);
    const ref = r.read('auth-secret', secretReference);
    if (ref.state === 'invalid') return deny(`annotation auth-secret: ${ref.message}`);
    if (ref.state === 'absent') {
      warn('auth-secret', 'auth-type is set but auth-secret is missing; the location is denied');
      return deny('annotation auth-secret: missing');
    }
    const ns = ing.metadata.namespace ?? 'default';
    const secretKey = ref.value.startsWith('/') ? `${ns}${ref.value}` : ref.value;
    const secretNs = secretKey.slice(0, secretKey.indexOf('/'));
    const fail = (message: string) => {
      warn('auth-secret', message);
      return deny(`annotation auth-secret: ${message}`);
    };
    if (secretNs !== ns && !ctx.settings.allowCrossNamespaceResources) {
      return fail(`Secret ${secretKey} is in another namespace and allow-cross-namespace-resources is false`);
    }
    const secret = ctx.store.getSecret(secretKey);
    if (secret === undefined) return fail(`Secret ${secretKey} not found`);
    const kind = secretType.state === 'ok' ? secretType.value : 'auth-file';
    let users: string[];
    try {
      const read = usersFromSecret(secret, kind);
      users = read.users;
      // As ingress-nginx: such entries match no password (401), the location stays protected.
      if (read.unusable) warn('auth-secret', `Secret ${secretKey}: ${read.unusable}; no password matches ${users.length === 0 ? 'any user' : 'them'}`);
    } catch (err) {
      if (!(err instanceof InvalidValue)) throw err;
      return fail(`Secret ${secretKey}: ${err.message}`);
    }
    return {
      basicAuth: { type: type.value, realm: r.get('auth-realm', safeString, ''), secret: secretKey, secretType: kind, users },
      denied: null,
    };
  },
};
