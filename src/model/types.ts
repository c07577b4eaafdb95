// The model: the one intermediate representation built from the store. nginx.conf, the Lua
// payloads, status and debug output are all derived from a Configuration, never from raw
// Kubernetes objects. Field names of Backend and its parts are ingress-nginx's JSON names,
// because backends are POSTed as they are to the Lua endpoint.
import type { PathType } from '../store/kube-types.js';
import type { NginxSettings } from './config/settings.js';

export type { PathType };

/** An upstream endpoint; `port` is a string as in ingress-nginx's payload. */
export interface Endpoint {
  address: string;
  port: string;
}

export interface CookieSessionAffinity {
  name: string;
  expires: string;
  maxage: string;
  /** host → paths using this backend with affinity. */
  locations: Record<string, string[]>;
  secure: boolean;
  path: string;
  domain: string;
  samesite: string;
  conditional_samesite_none: boolean;
  changeonfailure: boolean;
}

export interface SessionAffinityConfig {
  /** '' (none) or 'cookie'. */
  name: '' | 'cookie';
  mode: '' | 'balanced' | 'persistent';
  cookieSessionAffinity: CookieSessionAffinity;
}

export interface UpstreamHashByConfig {
  'upstream-hash-by'?: string;
  'upstream-hash-by-subset'?: boolean;
  'upstream-hash-by-subset-size'?: number;
}

export interface TrafficShapingPolicy {
  weight: number;
  weightTotal: number;
  header: string;
  headerValue: string;
  headerPattern: string;
  /** Set (true) only when canary-by-header-pattern was refused: a request with the header stays on the primary. */
  headerPatternInvalid?: true;
  cookie: string;
}

/** The slice of a Service the Lua side needs (ExternalName resolution). */
export interface BackendService {
  metadata: { namespace: string; name: string };
  spec: { type: string; externalName?: string; clusterIP?: string };
}

export interface Backend {
  /** `<namespace>-<service>-<port number or name>`, or `upstream-default-backend`. */
  name: string;
  service: BackendService | null;
  port: string;
  sslPassthrough: boolean;
  endpoints: Endpoint[];
  sessionAffinityConfig: SessionAffinityConfig;
  upstreamHashByConfig: UpstreamHashByConfig;
  noServer: boolean;
  trafficShapingPolicy: TrafficShapingPolicy;
  alternativeBackends: string[];
  'load-balance': string;
}

export interface IngressRef {
  namespace: string;
  name: string;
}

// ---- Typed annotation values. Parsers in ./annotations produce these; the renderer only
// ---- ever sees these types, never a raw annotation string.

export type BackendProtocol = 'HTTP' | 'HTTPS' | 'GRPC' | 'GRPCS' | 'AUTO_HTTP' | 'FCGI';

export interface RewriteConfig {
  /** '' when no rewrite-target. */
  target: string;
  useRegex: boolean;
  appRoot: string;
  sslRedirect: boolean;
  forceSSLRedirect: boolean;
  preserveTrailingSlash: boolean;
  xForwardedPrefix: string;
}

export interface RedirectConfig {
  url: string;
  code: number;
}

export interface CorsConfig {
  enabled: boolean;
  allowOrigin: string[];
  allowMethods: string;
  allowHeaders: string;
  exposeHeaders: string;
  allowCredentials: boolean;
  maxAge: number;
}

export interface BasicAuthConfig {
  type: 'basic' | 'digest';
  realm: string;
  /** `namespace/name` of the auth Secret. */
  secret: string;
  secretType: 'auth-file' | 'auth-map';
  /** htpasswd lines (user:hash) taken from the Secret, validated. */
  users: string[];
}

export interface ExternalAuthConfig {
  url: string;
  host: string;
  method: string;
  signin: string;
  signinRedirectParam: string;
  responseHeaders: string[];
  cacheKey: string;
  cacheDuration: string[];
}

export interface RateLimitConfig {
  rps: number;
  rpm: number;
  connections: number;
  burstMultiplier: number;
  limitRate: number;
  limitRateAfter: number;
  allowlist: string[];
}

export interface ProxyConfig {
  connectTimeout: number;
  sendTimeout: number;
  readTimeout: number;
  /** NGINX size strings, validated (e.g. `1m`, `8k`). */
  bodySize: string;
  bufferSize: string;
  buffersNumber: number;
  buffering: 'on' | 'off';
  requestBuffering: 'on' | 'off';
  nextUpstream: string[];
  nextUpstreamTimeout: number;
  nextUpstreamTries: number;
  httpVersion: '1.0' | '1.1';
  clientBodyBufferSize: string;
}

/** The typed, location-scoped annotation values: what an Ingress's annotations say about each of its locations. */
/** The modsecurity annotations of an Ingress (src/model/annotations/modsecurity.ts). */
export interface ModSecurityConfig {
  /** enable-modsecurity; null when the annotation is absent or invalid (the ConfigMap decides). */
  readonly enable: boolean | null;
  /** enable-owasp-core-rules. */
  readonly owaspRules: boolean;
  /** modsecurity-transaction-id: an NGINX variable expression, or ''. */
  readonly transactionId: string;
  /** modsecurity-snippet as ModSecurity reads it, in pieces NGINX takes as one parameter each. */
  readonly rules: readonly string[];
}

export interface LocationAnnotations {
  rewrite: RewriteConfig;
  redirect: RedirectConfig | null;
  cors: CorsConfig | null;
  basicAuth: BasicAuthConfig | null;
  externalAuth: ExternalAuthConfig | null;
  allowlist: string[];
  denylist: string[];
  rateLimit: RateLimitConfig | null;
  proxy: ProxyConfig;
  upstreamVhost: string;
  backendProtocol: BackendProtocol;
  connectionHeader: string;
  customHttpErrors: number[];
  accessLog: boolean;
  /** Only set when snippets are allowed; otherwise ''. */
  configurationSnippet: string;
  /** null when the Ingress sets none of the modsecurity annotations. */
  modsecurity: ModSecurityConfig | null;
}

export interface Location extends LocationAnnotations {
  /** The path NGINX matches: the Ingress path after normalisation ('' → '/') and the Prefix split. */
  path: string;
  /** The Ingress path, on both pieces of a Prefix split (ingress-nginx's IngressPath: $location_path, the metrics' path label). */
  ingressPath?: string;
  pathType: PathType;
  isDefBackend: boolean;
  ingress: IngressRef | null;
  service: { name: string; port: string } | null;
  /** Upstream (Backend) name. */
  backend: string;
  /** Set when the location must answer 503 (invalid annotation, missing backend...). */
  denied: string | null;
  /** Upstream name of the `default-backend` annotation's service, if any. */
  defaultBackend: string | null;
}

export interface Server {
  /** Host name; `_` is the default server. */
  hostname: string;
  aliases: string[];
  sslPassthrough: boolean;
  /** Certificate uid (key of Configuration.certificates), `fallback` (FALLBACK_UID: NGINX's self-signed one), or null (no TLS). */
  certificate: string | null;
  /** `namespace/name` of the TLS Secret the certificate came from, if any. */
  tlsSecret: string | null;
  redirectFromToWWW: boolean;
  /** Host-wide regex mode: some location uses use-regex or a rewrite-target ≠ its path. */
  useRegex: boolean;
  /** Only set when snippets are allowed; otherwise ''. */
  serverSnippet: string;
  locations: Location[];
}

export interface Certificate {
  /** Stable id: hash of the PEM. */
  uid: string;
  /** `namespace/name` of the Secret. */
  secret: string;
  /** Certificate chain + private key, PEM. */
  pem: string;
  hosts: string[];
  notAfter: string; // ISO time
}

export interface L4Service {
  port: number;
  backend: { namespace: string; name: string; port: string };
  endpoints: Endpoint[];
  proxyProtocol: { decode: boolean; encode: boolean };
}

export interface Configuration {
  /** Sorted by hostname, `_` first. */
  servers: Server[];
  /** Sorted by name, `upstream-default-backend` included. */
  backends: Backend[];
  tcpEndpoints: L4Service[];
  udpEndpoints: L4Service[];
  /** uid → certificate. */
  certificates: Record<string, Certificate>;
  /** uid of the --default-ssl-certificate, or null (self-signed fallback). */
  defaultCertificate: string | null;
  settings: NginxSettings;
}

/** A problem with user input: it names the object and the field. */
export interface ModelWarning {
  /** e.g. `Ingress default/web`, `Secret default/tls`, `ConfigMap ingress/nginx`. */
  object: string;
  /** e.g. `metadata.annotations["nginx.ingress.kubernetes.io/rewrite-target"]`, `spec.tls[0]`. */
  field: string;
  message: string;
  /** The Kubernetes Event reason in controller mode; `Invalid` when absent. */
  reason?: string;
}
