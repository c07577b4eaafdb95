// authtls group: client certificate authentication (mTLS) for the Ingress's host. NGINX checks
// client certificates in the TLS handshake, so the setting is the server's (the host's oldest
// Ingress that sets it, see ../server-tls.ts). It fails closed: a Secret that is missing, in
// another namespace, without a usable `ca.crt`, or an auth-tls-match-cn NGINX would refuse,
// denies the Ingress's locations and, when it is the host's setting, the whole host (403).
import { bool, int, InvalidValue, oneOf, pcreRegex, preview, type Check } from '../../checks/validate.js';
import { caBundle, crlFile, fromReferencedSecret, secretReference } from '../../checks/tls-secrets.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'auth-tls-secret': 'Medium',
  'auth-tls-verify-client': 'Medium',
  'auth-tls-verify-depth': 'Low',
  'auth-tls-error-page': 'High',
  'auth-tls-pass-certificate-to-upstream': 'Low',
  'auth-tls-match-cn': 'High',
} as const;

export type VerifyClient = 'on' | 'off' | 'optional' | 'optional_no_ca';

export interface ClientCertAuth {
  /** `namespace/name` of the Secret. */
  readonly secret: string;
  /** The CA bundle (ca.crt) as NGINX reads it: certificates only. */
  readonly ca: string;
  /** The revocation list (ca.crl), if the Secret has one. */
  readonly crl: string | null;
  readonly verifyClient: VerifyClient;
  readonly verifyDepth: number;
  /** Where 495/496 (bad or missing certificate) go: an http(s) URL or a path; '' for NGINX's 400. */
  readonly errorPage: string;
  readonly passCertificateToUpstream: boolean;
  /** A PCRE the client's subject DN must match (`CN=…`), '' for none. */
  readonly matchCN: string;
}

/** What an Ingress asks for: the settings, or why they cannot be used (the host then answers 403). */
export type AuthTLSSetting = ClientCertAuth | { readonly error: string };

export interface AuthTLSValue {
  readonly authTLS: AuthTLSSetting | null;
}

const verifyClient = oneOf(['on', 'off', 'optional', 'optional_no_ca'] as const);
/** ssl_verify_depth takes any non-negative number; ingress-nginx reads 0 as its default, 1. */
const verifyDepth: Check<number> = (raw) => int(0, 2 ** 31 - 1)(raw) || 1;

/** An error page as ingress-nginx accepts one, without its named locations (see docs/differences.md). */
const errorPage: Check<string> = (raw) => {
  const v = raw.trim();
  if (v.startsWith('@')) throw new InvalidValue('a named location cannot be used (no Ingress defines one); use a URL or a path');
  if (v.length > 2048 || !/^((https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?)?(\/[A-Za-z0-9._-]+)*\/?)$/.test(v) || v === '') {
    throw new InvalidValue(`"${preview(v)}" is not an http(s) URL or a path of letters, digits, '.', '_' and '-'`);
  }
  return v;
};

/** `CN=` and a regular expression NGINX's PCRE2 compiles, matched against the client's subject DN. */
const matchCN: Check<string> = (raw) => {
  const v = raw.trim();
  if (!v.startsWith('CN=')) throw new InvalidValue(`"${preview(v)}" does not start with CN=`);
  return pcreRegex({ caseless: false })(v);
};

const fields = { authTLS: 'server' } as const;

export const authTLSGroup: AnnotationGroup<AuthTLSValue, typeof fields> = {
  name: 'authtls',
  keys,
  fields,
  secrets: ['auth-tls-secret'],
  docs: {
    'auth-tls-secret': {
      values: '`name` or `namespace/name` of a Secret with `ca.crt` (and optionally `ca.crl`); another namespace only with allow-cross-namespace-resources',
      default: 'none', description: 'Require client certificates signed by the CA bundle `ca.crt` on the host (HTTPS).',
      onInvalid: "warning; the Ingress's locations are denied (503) and, when this is the host's oldest Ingress, the whole host answers 403 — also when the Secret is missing or has no valid ca.crt",
    },
    'auth-tls-verify-client': { values: '"on", "off", "optional" or "optional_no_ca"', default: 'on', description: 'ssl_verify_client: whether a certificate is required, optional, or not checked.', onInvalid: 'warning; "on"' },
    'auth-tls-verify-depth': { values: 'integer (0 means 1)', default: '1', description: 'ssl_verify_depth: how many CA certificates may sign the client certificate in a chain.', onInvalid: 'warning; 1' },
    'auth-tls-error-page': { values: 'http(s) URL or path', default: "none (NGINX's 400 page)", description: 'Where a request with a missing or invalid certificate is sent (error_page 495 496).' },
    'auth-tls-pass-certificate-to-upstream': { values: '"true" or "false"', default: 'false', description: 'Send the client certificate (URL-encoded PEM) upstream in the ssl-client-cert header.' },
    'auth-tls-match-cn': {
      values: '`CN=` followed by a regular expression (PCRE2, no quotes, braces or `;`)', default: 'none',
      description: "The client certificate's subject DN must match it, or the request is refused (403).",
      onInvalid: "warning; the Ingress's locations are denied (503), as for a broken auth-tls-secret",
    },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const ref = r.read('auth-tls-secret', secretReference('auth-tls-secret'));
    if (ref.state === 'absent') {
      for (const k of Object.keys(keys)) if (k !== 'auth-tls-secret' && r.has(k)) warn(k, 'ignored without auth-tls-secret');
      return { authTLS: null, denied: null };
    }
    const fail = (key: string, message: string, warned = false) => {
      if (!warned) warn(key, message);
      const error = `annotation ${key}: ${message}`;
      return { authTLS: { error }, denied: error };
    };
    if (ref.state === 'invalid') return fail('auth-tls-secret', ref.message, true);
    const cn = r.read('auth-tls-match-cn', matchCN);
    if (cn.state === 'invalid') return fail('auth-tls-match-cn', cn.message, true);
    let found: { key: string; value: { ca: string; crl: string | undefined } };
    try {
      found = fromReferencedSecret(ref.value, ing.metadata.namespace ?? 'default', ctx.store, ctx.settings.allowCrossNamespaceResources, (secret, key) => {
        const ca = caBundle(secret);
        // ingress-nginx then leaves the host without client authentication; ingress-rx denies.
        if (ca === undefined) throw new InvalidValue(`Secret ${key} has no data["ca.crt"]`);
        return { ca, crl: crlFile(secret) };
      });
    } catch (err) {
      if (!(err instanceof InvalidValue)) throw err;
      return fail('auth-tls-secret', err.message);
    }
    const { ca, crl } = found.value;
    return {
      authTLS: {
        secret: found.key, ca, crl: crl ?? null,
        verifyClient: r.get('auth-tls-verify-client', verifyClient, 'on'),
        verifyDepth: r.get('auth-tls-verify-depth', verifyDepth, 1),
        errorPage: r.get('auth-tls-error-page', errorPage, ''),
        passCertificateToUpstream: r.get('auth-tls-pass-certificate-to-upstream', bool, false),
        matchCN: cn.state === 'ok' ? cn.value : '',
      },
      denied: null,
    };
  },
};

/** The settings, when an Ingress's auth-tls-* can be used. */
export function clientCertAuthOf(setting: AuthTLSSetting | null): ClientCertAuth | null {
  return setting !== null && !('error' in setting) ? setting : null;
}
