// What moving from ingress-nginx changes, key by key: whether ingress-rx reads an annotation or
// ConfigMap key (from the parsers themselves, so this cannot drift from the code), whether
// ingress-nginx reads it (from its own parsers, ./ingress-nginx-keys.ts, generated from its
// source), where it behaves differently (a section of docs/differences.md), and what to use
// instead of a key it refuses. test/unit/admission/catalogue.test.ts checks the two sides agree.
import { ANNOTATION_GROUPS } from '../model/ingress/annotations/index.js';
import { CONFIGMAP_KEYS } from '../model/core/config/parse.js';
import { INGRESS_NGINX_ANNOTATIONS, INGRESS_NGINX_CONFIGMAP_KEYS } from './ingress-nginx-keys.js';
import { REFUSED_ANNOTATIONS, REFUSED_CONFIGMAP_KEYS, refusal } from '../model/core/refused.js';

/** identical: same meaning; different: supported with a documented difference; refused: ignored with a warning; unknown: neither project knows the key (a typo?). */
export type KeyStatus = 'identical' | 'different' | 'refused' | 'unknown';

export interface KeyVerdict {
  status: KeyStatus;
  /** The docs/differences.md section (its heading) for `different`. */
  section?: string;
  /** What differs (`different`), or what to use instead (`refused`, `unknown`). */
  note?: string;
}

export const DIFFERENCES_DOC = 'docs/differences.md';

/** GitHub's anchor of a Markdown heading. */
export function anchorOf(heading: string): string {
  return heading.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-');
}

const PARSING = 'Annotations and ConfigMap parsing';
const MODEL = 'Model';
const NGINX = 'NGINX configuration';
const ACCESS_LOG = 'Access log';
const WAF = 'ModSecurity';
const TRACING = 'OpenTelemetry';

type Notes = Readonly<Record<string, { section: string; note: string }>>;

const ANNOTATION_DIFFERENCES: Notes = {
  'allowlist-source-range': { section: PARSING, note: 'one invalid entry denies the location (ingress-nginx: only when no entry is valid)' },
  'whitelist-source-range': { section: PARSING, note: 'one invalid entry denies the location (ingress-nginx: only when no entry is valid)' },
  'denylist-source-range': { section: PARSING, note: 'one invalid entry denies the location (ingress-nginx: only when no entry is valid)' },
  'auth-secret': { section: PARSING, note: 'a missing Secret, one in another namespace (without allow-cross-namespace-resources) or one without valid users denies the location' },
  'auth-secret-type': { section: PARSING, note: 'an invalid value denies the location' },
  'auth-type': { section: NGINX, note: '`digest` needs a module Debian does not ship: such locations answer 503' },
  'auth-url': { section: PARSING, note: 'must be an http or https URL whose host is a name or $host (other variables there are refused)' },
  'auth-signin': { section: PARSING, note: 'must be an http or https URL' },
  'permanent-redirect': { section: PARSING, note: 'must be an http or https URL, or a path' },
  'temporal-redirect': { section: PARSING, note: 'must be an http or https URL' },
  'configuration-snippet': { section: PARSING, note: 'needs allow-snippet-annotations "true" and annotations-risk-level Critical; unbalanced braces are refused' },
  'server-snippet': { section: PARSING, note: 'needs allow-snippet-annotations "true" and annotations-risk-level Critical; unbalanced braces are refused' },
  'stream-snippet': { section: PARSING, note: 'needs allow-snippet-annotations "true" and annotations-risk-level Critical; only stream server and upstream blocks' },
  'canary-by-header-pattern': { section: PARSING, note: '`{n,m}` quantifiers are refused (braces never reach nginx.conf)' },
  canary: { section: MODEL, note: 'a canary merging into at least one primary location is kept (ingress-nginx drops it when one of its paths finds no primary)' },
  'server-alias': { section: MODEL, note: 'an alias belongs to the oldest host claiming it; later claims are dropped with a warning' },
  'from-to-www-redirect': { section: MODEL, note: 'the oldest Ingress of the host decides (ingress-nginx ORs every Ingress of the host)' },
  affinity: { section: MODEL, note: 'the oldest Ingress using a backend gives its cookie settings (ingress-nginx: the last one)' },
  'load-balance': { section: MODEL, note: 'the oldest Ingress using a backend decides; consistent hashing is upstream-hash-by' },
  'upstream-hash-by': { section: MODEL, note: 'the oldest Ingress using a backend decides' },
  'service-upstream': { section: MODEL, note: 'the oldest Ingress using a backend decides' },
  'default-backend': { section: MODEL, note: 'its upstream always exists and is used at request time when the primary has no endpoints' },
  'ssl-passthrough': { section: NGINX, note: "NGINX's stream module reads the SNI (ingress-nginx: a Go TCP proxy); needs --enable-ssl-passthrough as there" },
  'mirror-target': { section: NGINX, note: 'the copy is sent from Lua after the request (never delaying it), to an address the upstream address policy allows; a target without a path gets the request URI' },
  'auth-keepalive': { section: NGINX, note: "auth_request's subrequest (HTTP/2 too) keeps a connection only when the auth answer has no body; the service is dialled under the upstream address policy" },
  'auth-keepalive-share-vars': { section: NGINX, note: "no effect: the auth subrequest always shares the request's variables, as \"true\" does" },
  'fastcgi-params-configmap': { section: PARSING, note: 'a ConfigMap of another namespace (with allow-cross-namespace-resources) is read there (ingress-nginx reads the Ingress\'s namespace even then); an invalid entry denies the location' },
  'auth-proxy-set-headers': { section: PARSING, note: 'a missing or foreign ConfigMap, or an invalid header in it, denies the location' },
  'auth-tls-secret': { section: PARSING, note: 'a missing Secret, one in another namespace (without allow-cross-namespace-resources) or one without a valid ca.crt closes the host (403) when it is the host\'s oldest Ingress, else that Ingress\'s paths; ingress-nginx leaves the server without client authentication' },
  'auth-tls-verify-client': { section: NGINX, note: '"on": plain HTTP to the host is always redirected to HTTPS (ingress-nginx serves it without asking for a certificate)' },
  'auth-tls-match-cn': { section: PARSING, note: 'an expression NGINX would refuse closes the host (403)' },
  'auth-tls-error-page': { section: PARSING, note: 'a named location (@name) is refused: no Ingress can define one' },
  'auth-tls-pass-certificate-to-upstream': { section: NGINX, note: 'on a controller with client authentication, ssl-client-* headers from clients are removed on every host' },
  'proxy-ssl-secret': { section: NGINX, note: 'locations with proxy-ssl-* settings never keep upstream connections alive (a kept connection would carry one location\'s client certificate to another)' },
  'proxy-ssl-verify': { section: PARSING, note: '"on" with a Secret without ca.crt denies the locations (503); ingress-nginx then proxies unverified' },
  'modsecurity-snippet': { section: WAF, note: 'directives that read or write files, fetch URLs, run scripts or change what every Ingress shares are refused' },
  'enable-owasp-core-rules': { section: WAF, note: "Debian's Core Rule Set 3.3 (ingress-nginx bundles CRS 4)" },
  'enable-opentelemetry': { section: TRACING, note: 'spans are made in Lua and exported as OTLP/HTTP JSON (ingress-nginx: its C++ module, OTLP/gRPC)' },
};

const CONFIGMAP_DIFFERENCES: Notes = {
  'annotation-value-word-blocklist': { section: PARSING, note: 'a blocked word rejects that annotation with a warning, not the whole Ingress' },
  'annotations-risk-level': { section: PARSING, note: 'an annotation above the level is ignored with a warning (and refused by the webhook)' },
  'block-cidrs': { section: NGINX, note: 'a guard in every server: a location with its own allow/deny list does not undo it' },
  'allow-backend-server-header': { section: NGINX, note: "the backend's Server header reaches the client (ingress-nginx cleared it unless server-tokens)" },
  'no-auth-locations': { section: NGINX, note: 'a path and the paths below it (ingress-nginx: a string prefix)' },
  'proxy-protocol-header-timeout': { section: PARSING, note: 'seconds; `5` and `5s` both accepted; applies to the ssl-passthrough listener, as in ingress-nginx' },
  'log-format-upstream': { section: PARSING, note: "may not contain ', backslash or control characters" },
  'load-balance': { section: PARSING, note: 'round_robin or ewma; consistent hashing is the upstream-hash-by annotation' },
  'worker-processes': { section: NGINX, note: 'default `auto`: NGINX counts the CPUs (ingress-nginx writes the count the controller sees)' },
  'enable-owasp-modsecurity-crs': { section: WAF, note: "Debian's Core Rule Set 3.3 (ingress-nginx bundles CRS 4)" },
  'modsecurity-snippet': { section: WAF, note: 'split into several modsecurity_rules when longer than NGINX takes in one parameter' },
  'enable-opentelemetry': { section: TRACING, note: 'spans are made in Lua and exported as OTLP/HTTP JSON (ingress-nginx: its C++ module, OTLP/gRPC)' },
  'otlp-collector-port': { section: TRACING, note: "the collector's OTLP/HTTP port, default 4318 (ingress-nginx: OTLP/gRPC, 4317)" },
  'otlp-collector-host': { section: TRACING, note: 'a host name or address (ingress-nginx documents a URL)' },
  'opentelemetry-operation-name': { section: TRACING, note: 'NGINX variables in it are expanded when the request ends' },
  'use-geoip2': { section: NGINX, note: 'databases are read from --geoip-dir (not downloaded); the legacy GeoIP variables are not provided' },
  'no-tls-redirect-locations': { section: NGINX, note: 'applied in the model (the locations lose ssl-redirect) rather than in Lua' },
  'access-log-path': { section: ACCESS_LOG, note: 'an absolute path of plain characters; default logs/access.log under the NGINX prefix' },
  'http-access-log-path': { section: ACCESS_LOG, note: 'an absolute path of plain characters' },
  'stream-access-log-path': { section: ACCESS_LOG, note: 'an absolute path of plain characters; ssl-passthrough connections are logged there too' },
  'error-log-path': { section: ACCESS_LOG, note: 'an absolute path of plain characters; default logs/error.log under the NGINX prefix' },
  'skip-access-log-urls': { section: ACCESS_LOG, note: 'exact paths (no ~regex)' },
  'syslog-host': { section: ACCESS_LOG, note: 'an IP address only (NGINX resolves a name once, at load, and fails the reload if it cannot)' },
  'access-log-params': { section: ACCESS_LOG, note: 'buffer=, gzip and flush= only (if= is the controller\'s); ignored while enable-syslog is on' },
  'bind-address': { section: NGINX, note: 'replaces the wildcard listeners only: explicit listen addresses (local mode) stay' },
  'forwarded-for-proxy-protocol-header': { section: NGINX, note: 'a request carrying the header itself is refused (400): the real-IP module would believe it' },
  'limit-conn-zone-variable': { section: NGINX, note: 'another key names other zones: NGINX refuses a reload that changes the key of a zone' },
  'main-snippet': { section: PARSING, note: 'Critical: only with annotations-risk-level Critical; a snippet that leaves its block or opens one its context cannot hold is refused' },
  'http-snippet': { section: PARSING, note: 'as main-snippet' },
  'server-snippet': { section: PARSING, note: 'as main-snippet' },
  'location-snippet': { section: PARSING, note: 'as main-snippet' },
  'stream-snippet': { section: PARSING, note: 'as main-snippet' },
};

/** Keys ingress-rx reads that ingress-nginx does not: a ConfigMap carrying one behaved otherwise under ingress-nginx. */
export const INGRESS_RX_ONLY_CONFIGMAP_KEYS: Readonly<Record<string, string>> = {
  'ssl-prefer-server-ciphers': 'ingress-nginx has no such ConfigMap key: it ignored it and always preferred the server\'s ciphers; ingress-rx applies it',
};
export const INGRESS_RX_ONLY_ANNOTATIONS: Readonly<Record<string, string>> = {};

const SNIPPETS = 'a configuration-snippet or server-snippet annotation (needs allow-snippet-annotations and annotations-risk-level Critical)';

const ANNOTATION_KEYS = new Set(ANNOTATION_GROUPS.flatMap((g) => Object.keys(g.keys)));
const CONFIGMAP_KEY_NAMES = new Set(CONFIGMAP_KEYS.map((k) => k.key));
const NGINX_ANNOTATIONS = new Set(INGRESS_NGINX_ANNOTATIONS);
const NGINX_CONFIGMAP_KEYS = new Set(INGRESS_NGINX_CONFIGMAP_KEYS);

function verdict(key: string, supported: Set<string>, known: Set<string>, differences: Notes, ownOnly: Readonly<Record<string, string>>,
  alternatives: ReadonlyArray<readonly [RegExp, string]>, what: string): KeyVerdict {
  if (supported.has(key)) {
    if (!known.has(key)) return { status: 'different', section: PARSING, note: ownOnly[key] ?? `ingress-nginx has no such ${what} and ignored it; ingress-rx applies it` };
    const d = differences[key];
    return d ? { status: 'different', section: d.section, note: d.note } : { status: 'identical' };
  }
  const why = refusal(alternatives, key);
  // A key ingress-nginx reads today, or one an earlier version read (jaeger-*, use-geoip).
  if (!known.has(key) && why === undefined) return { status: 'unknown', note: `neither ingress-nginx nor ingress-rx has this ${what}: a typo?` };
  return { status: 'refused', note: why ?? `no equivalent in ingress-rx: the ${what} is ignored with a warning` };
}

/** An annotation key (without prefix). */
export function annotationVerdict(key: string): KeyVerdict {
  return verdict(key, ANNOTATION_KEYS, NGINX_ANNOTATIONS, ANNOTATION_DIFFERENCES, INGRESS_RX_ONLY_ANNOTATIONS, REFUSED_ANNOTATIONS, 'annotation');
}

export function configMapVerdict(key: string): KeyVerdict {
  return verdict(key, CONFIGMAP_KEY_NAMES, NGINX_CONFIGMAP_KEYS, CONFIGMAP_DIFFERENCES, INGRESS_RX_ONLY_CONFIGMAP_KEYS, REFUSED_CONFIGMAP_KEYS, 'key');
}

/** Every section heading the catalogue links to (a test checks docs/differences.md has them). */
export function linkedSections(): string[] {
  return [...new Set([...Object.values(ANNOTATION_DIFFERENCES), ...Object.values(CONFIGMAP_DIFFERENCES)].map((d) => d.section))];
}
