// authbasic group: HTTP basic/digest authentication with users from a Secret (an htpasswd file
// under key `auth`, or a user → hash map). Any problem with the Secret denies the location, so
// a broken Secret never leaves it open.
import type { Secret } from '../../store/kube-types.js';
import { InvalidValue, oneOf, preview, safeString, type Check } from '../validate.js';
import { annotationReader } from './reader.js';
import { pathUnderAny } from './site.js';
import type { AnnotationGroup } from './types.js';
import { secretRef } from '../../store/secret-ref.js';

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

/** Validates htpasswd lines (`user:hash`, or `user:realm:hash` for digest). */
export function htpasswdLines(text: string): string[] {
  const users: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '' || line.startsWith('#')) return;
    const sep = line.indexOf(':');
    if (sep < 0 || !USER.test(line.slice(0, sep)) || !HASH.test(line.slice(sep + 1))) {
      throw new InvalidValue(`line ${i + 1} of the htpasswd file is not user:hash`);
    }
    users.push(line);
  });
  if (users.length === 0) throw new InvalidValue('the htpasswd file has no users');
  return users;
}

function secretValue(secret: Secret, key: string): string | undefined {
  const b64 = secret.data?.[key];
  if (b64 !== undefined) return Buffer.from(b64, 'base64').toString('utf8');
  return secret.stringData?.[key];
}

function usersFromSecret(secret: Secret, type: BasicAuthConfig['secretType']): string[] {
  if (type === 'auth-file') {
    const file = secretValue(secret, 'auth');
    if (file === undefined) throw new InvalidValue('the Secret has no `auth` key');
    return htpasswdLines(file);
  }
  const names = [...new Set([...Object.keys(secret.data ?? {}), ...Object.keys(secret.stringData ?? {})])].sort();
  const lines = names.map((user) => {
    const hash = (secretValue(secret, user) ?? '').trim();
    if (!USER.test(user) || !HASH.test(hash)) throw new InvalidValue(`entry "${preview(user)}" of the auth-map Secret is not user → hash`);
    return `${user}:${hash}`;
  });
  if (lines.length === 0) throw new InvalidValue('the auth-map Secret has no users');
  return lines;
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
    'auth-secret': { values: '`name` or `namespace/name` of a Secret (another namespace only with allow-cross-namespace-resources)', default: 'none', description: 'Secret holding the users.', onInvalid: 'warning; the location is denied (503) — also when the Secret is missing or holds no valid users' },
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
      users = usersFromSecret(secret, kind);
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
