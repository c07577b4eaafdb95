// proxyssl group: TLS towards an HTTPS backend (backend-protocol HTTPS or GRPCS): the CA bundle
// that verifies it, the client certificate shown to it, SNI and name, protocols and ciphers,
// from the Secret proxy-ssl-secret names. Each location of the Ingress gets them; the host's
// server also takes the oldest such Ingress's, as ingress-nginx does, unless the ConfigMap's
// proxy-ssl-location-only is true (see ../server-tls.ts). A Secret that cannot be used denies
// the Ingress's locations.
import { opensslCipherList } from '../../checks/openssl.js';
import { caBundle, fromReferencedSecret, keyPair, secretReference, type KeyPair } from '../../checks/tls-secrets.js';
import { hostname, int, InvalidValue, onOff, preview, sortedUnique, type Check } from '../../checks/validate.js';
import { hostTemplate } from './upstreamvhost.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'proxy-ssl-secret': 'Medium',
  'proxy-ssl-ciphers': 'Medium',
  'proxy-ssl-protocols': 'Low',
  'proxy-ssl-name': 'High',
  'proxy-ssl-verify': 'Low',
  'proxy-ssl-verify-depth': 'Low',
  'proxy-ssl-server-name': 'Low',
} as const;

export interface ProxySSLConfig {
  /** `namespace/name` of the Secret. */
  readonly secret: string;
  /** ca.crt, which verifies the backend; null when the Secret has none (then no verification settings are printed). */
  readonly ca: string | null;
  /** tls.crt/tls.key, shown to the backend; null when the Secret has none. */
  readonly clientCertificate: KeyPair | null;
  readonly ciphers: string;
  readonly protocols: readonly string[];
  /** proxy_ssl_name: a host name or a template with variables (`$host`); '' for NGINX's default (proxy_pass's host). */
  readonly name: string;
  readonly verify: 'on' | 'off';
  readonly verifyDepth: number;
  readonly serverName: 'on' | 'off';
}

export interface ProxySSLValue {
  readonly proxySSL: ProxySSLConfig | null;
}

/** As ingress-nginx: TLSv1.2 and TLSv1.3 only, sorted. */
const protocols: Check<string[]> = (raw) => {
  const list = raw.trim().split(/\s+/).filter((p) => p !== '');
  const bad = list.find((p) => p !== 'TLSv1.2' && p !== 'TLSv1.3');
  if (bad !== undefined || list.length === 0) throw new InvalidValue(`"${preview(raw)}" is not a space-separated list of TLSv1.2 and TLSv1.3`);
  return sortedUnique(list);
};
/** A host name, or host characters with variables of the request or location (`$host`, `$service_name.$namespace.svc`), as ingress-nginx accepts. */
const sslName: Check<string> = (raw) => (raw.includes('$') ? hostTemplate(raw) : hostname()(raw));
const depth: Check<number> = (raw) => int(0, 2 ** 31 - 1)(raw) || 1;

const fields = { proxySSL: 'location' } as const;

export const proxySSLGroup: AnnotationGroup<ProxySSLValue, typeof fields> = {
  name: 'proxyssl',
  keys,
  fields,
  secrets: ['proxy-ssl-secret'],
  docs: {
    'proxy-ssl-secret': {
      values: '`name` or `namespace/name` of a Secret with `ca.crt` and/or `tls.crt` + `tls.key`; another namespace only with allow-cross-namespace-resources',
      default: 'none', description: 'The CA bundle that verifies an HTTPS backend and the client certificate shown to it. The other proxy-ssl-* annotations need it.',
      onInvalid: "warning; the Ingress's locations are denied (503) — also when the Secret is missing or has neither",
    },
    'proxy-ssl-ciphers': { values: 'OpenSSL cipher list', default: 'DEFAULT', description: 'proxy_ssl_ciphers.' },
    'proxy-ssl-protocols': { values: 'space-separated: TLSv1.2 TLSv1.3', default: 'TLSv1.2', description: 'proxy_ssl_protocols.' },
    'proxy-ssl-name': { values: 'host name, or host characters with NGINX variables of the request or location (`$host`, `$service_name.$namespace.svc`)', default: 'none: `upstream_balancer` (proxy_pass\'s host), as ingress-nginx\'s', description: 'proxy_ssl_name: the name checked against the backend certificate and sent by SNI.' },
    'proxy-ssl-verify': { values: '"on" or "off"', default: 'off', description: "proxy_ssl_verify: check the backend's certificate against ca.crt." },
    'proxy-ssl-verify-depth': { values: 'integer (0 means 1)', default: '1', description: 'proxy_ssl_verify_depth.' },
    'proxy-ssl-server-name': { values: '"on" or "off"', default: 'off', description: 'proxy_ssl_server_name: send the name by SNI.' },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const ref = r.read('proxy-ssl-secret', secretReference('proxy-ssl-secret'));
    if (ref.state === 'absent') {
      for (const k of Object.keys(keys)) if (k !== 'proxy-ssl-secret' && r.has(k)) warn(k, 'ignored without proxy-ssl-secret');
      return { proxySSL: null, denied: null };
    }
    if (ref.state === 'invalid') return { proxySSL: null, denied: `annotation proxy-ssl-secret: ${ref.message}` };
    let secret: string;
    let ca: string | undefined;
    let pair: KeyPair | undefined;
    try {
      const found = fromReferencedSecret(ref.value, ing.metadata.namespace ?? 'default', ctx.store, ctx.settings.allowCrossNamespaceResources, (s, key) => {
        const read = { ca: caBundle(s), pair: keyPair(s) };
        if (read.ca === undefined && read.pair === undefined) throw new InvalidValue(`Secret ${key} has neither data["ca.crt"] nor data["tls.crt"] and data["tls.key"]`);
        return read;
      });
      ({ key: secret, value: { ca, pair } } = found);
    } catch (err) {
      if (!(err instanceof InvalidValue)) throw err;
      warn('proxy-ssl-secret', err.message);
      return { proxySSL: null, denied: `annotation proxy-ssl-secret: ${err.message}` };
    }
    const verify = r.get('proxy-ssl-verify', onOff, 'off');
    // ingress-nginx then prints no verification at all; ingress-rx refuses to proxy unverified.
    if (verify === 'on' && ca === undefined) {
      const message = `proxy-ssl-verify is on but Secret ${secret} has no data["ca.crt"] to verify with`;
      warn('proxy-ssl-verify', message);
      return { proxySSL: null, denied: `annotation proxy-ssl-verify: ${message}` };
    }
    return {
      proxySSL: {
        secret, ca: ca ?? null, clientCertificate: pair ?? null,
        ciphers: r.get('proxy-ssl-ciphers', opensslCipherList, 'DEFAULT'),
        protocols: r.get('proxy-ssl-protocols', protocols, ['TLSv1.2']),
        name: r.get('proxy-ssl-name', sslName, ''),
        verify,
        verifyDepth: r.get('proxy-ssl-verify-depth', depth, 1),
        serverName: r.get('proxy-ssl-server-name', onOff, 'off'),
      },
      denied: null,
    };
  },
};
