// The model: the one intermediate representation built from the store. nginx.conf, the Lua
// payloads, status and debug output are all derived from a Configuration, never from raw
// Kubernetes objects. Field names of Backend and its parts are ingress-nginx's JSON names,
// because backends are POSTed as they are to the Lua endpoint.
import type { PathType } from '../store/kube-types.js';
import type { AffinityCookie } from './annotations/affinity.js';
import type { LocationAnnotations } from './annotations/index.js';
import type { NginxSettings } from './config/settings.js';

export type { PathType };
export type { ModelWarning } from './warning.js';

/** An upstream endpoint; `port` is a string as in ingress-nginx's payload. */
export interface Endpoint {
  address: string;
  port: string;
}

export interface CookieSessionAffinity extends AffinityCookie {
  /** host → paths using this backend with affinity. */
  locations: Record<string, string[]>;
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
