// The model: the one intermediate representation built from the store. nginx.conf, the Lua
// payloads, status and debug output are all derived from a Configuration, never from raw
// Kubernetes objects. Every part is readonly: the incremental build hands back unchanged parts
// as the same objects and the renderer caches fragments by identity, so a model object must
// never change once made. Field names of Backend and its parts are ingress-nginx's JSON names,
// because backends are POSTed as they are to the Lua endpoint.
import type { PathType } from '../../store/kube-types.js';
import type { AffinityCookie } from '../ingress/annotations/affinity.js';
import type { LocationAnnotations } from '../ingress/annotations/index.js';
import type { NginxSettings } from './config/settings.js';
import type { AuthTLSSetting } from '../ingress/annotations/authtls.js';
import type { ProxySSLConfig } from '../ingress/annotations/proxyssl.js';

export type { PathType };
export type { ModelWarning } from './warning.js';

/** An upstream endpoint; `port` is a string as in ingress-nginx's payload. */
export interface Endpoint {
  readonly address: string;
  readonly port: string;
}

export interface CookieSessionAffinity extends AffinityCookie {
  /** host → paths using this backend with affinity. */
  readonly locations: Readonly<Record<string, readonly string[]>>;
}

export interface SessionAffinityConfig {
  /** '' (none) or 'cookie'. */
  readonly name: '' | 'cookie';
  readonly mode: '' | 'balanced' | 'persistent';
  readonly cookieSessionAffinity: CookieSessionAffinity;
}

export interface UpstreamHashByConfig {
  readonly 'upstream-hash-by'?: string;
  readonly 'upstream-hash-by-subset'?: boolean;
  readonly 'upstream-hash-by-subset-size'?: number;
}

export interface TrafficShapingPolicy {
  readonly weight: number;
  readonly weightTotal: number;
  readonly header: string;
  readonly headerValue: string;
  readonly headerPattern: string;
  /** Set (true) only when canary-by-header-pattern was refused: a request with the header stays on the primary. */
  readonly headerPatternInvalid?: true;
  readonly cookie: string;
}

/** The slice of a Service the Lua side needs (ExternalName resolution). */
export interface BackendService {
  readonly metadata: { readonly namespace: string; readonly name: string };
  readonly spec: { readonly type: string; readonly externalName?: string; readonly clusterIP?: string };
}

export interface Backend {
  /** `<namespace>-<service>-<port number or name>`, or `upstream-default-backend`. */
  readonly name: string;
  readonly service: BackendService | null;
  readonly port: string;
  readonly sslPassthrough: boolean;
  readonly endpoints: readonly Endpoint[];
  readonly sessionAffinityConfig: SessionAffinityConfig;
  readonly upstreamHashByConfig: UpstreamHashByConfig;
  readonly noServer: boolean;
  readonly trafficShapingPolicy: TrafficShapingPolicy;
  readonly alternativeBackends: readonly string[];
  readonly 'load-balance': string;
}

export interface IngressRef {
  readonly namespace: string;
  readonly name: string;
  /** Set on an HTTPRoute's location: the index of its rule in `spec.rules` (./origin.ts). Absent: an Ingress's. */
  readonly rule?: number;
}

/**
 * What an Ingress's annotations say about each of its locations: every group's location-scoped
 * fields. Frozen and shared: locations with equal settings hold the same object (one per parsed
 * annotation set, ../ingress/annotations/index.ts), so the renderer can print it once.
 */
export type LocationSettings = LocationAnnotations;

export interface Location {
  /** The path NGINX matches: the Ingress path after normalisation ('' → '/') and the Prefix split. */
  readonly path: string;
  /** The Ingress path, on both pieces of a Prefix split (ingress-nginx's IngressPath: $location_path, the metrics' path label). */
  readonly ingressPath?: string;
  readonly pathType: PathType;
  /**
   * An HTTPRoute RegularExpression path match: `path` is a PCRE2 pattern searched in the path as
   * NGINX's `location ~ path` does (case-sensitive; `^…$` anchors it), tried as NGINX tries regex
   * locations: after an exact match, before the longest prefix, in the server's order
   * (../core/paths.ts locationMatch).
   */
  readonly pathRegex?: true;
  readonly isDefBackend: boolean;
  readonly ingress: IngressRef | null;
  readonly service: { readonly name: string; readonly port: string } | null;
  /** Upstream (Backend) name. */
  readonly backend: string;
  /** Set when the location must answer 503 (invalid annotation, missing backend...). */
  readonly denied: string | null;
  /** The status a denied location answers when not 503: 500 for an HTTPRoute rule whose backendRefs cannot be used (the Gateway API's). */
  readonly deniedStatus?: 500;
  /**
   * Per-request conditions besides the path (HTTPRoute header, query and method matches): the
   * location takes a request only when all hold; else the next location of the same match, then
   * a shorter prefix, is tried (lua/route_match.lua). Served by the Lua router only.
   */
  readonly when?: RouteConditions;
  /** HTTPRoute filters (lua/route_filters.lua). Served by the Lua router only. */
  readonly filters?: RouteFilters;
  /**
   * Weighted backends (HTTPRoute backendRefs: two or more, or one with filters): the router draws one per request
   * with the share weight / sum of weights, in place of `backend`. Served by the Lua router only.
   */
  readonly split?: readonly WeightedBackend[];
  /** HTTPRoute rule `retry` (src/model/gateway/retry.ts). Served by the Lua router only. */
  readonly retry?: RouteRetry;
  /** `h2c`: the backend is reached over HTTP/2 cleartext (a Service port's appProtocol kubernetes.io/h2c). Served by the Lua router only. */
  readonly upstreamProtocol?: 'h2c';
  /**
   * The id of the router's TLS location its backend is reached through (BackendTLSPolicy on a
   * dynamic host: Configuration.backendTLSLocations). Served by the Lua router only.
   */
  readonly backendTLS?: string;
  /** The annotations' settings for this location (shared by every location with equal ones). */
  readonly settings: LocationSettings;
}

/** A router location reaching backends over verified TLS (nginx.conf's proxy_ssl_* are per location in NGINX 1.22). */
export interface BackendTLSLocation {
  /** A hash of what follows (16 hex digits): the location's and its files' name. */
  readonly id: string;
  /** The name sent by SNI and verified. */
  readonly hostname: string;
  /** The PEM CA bundle. */
  readonly ca: string;
  /** The Gateway's client certificate shown to the backend, or null. */
  readonly clientCertificate: { readonly cert: string; readonly key: string } | null;
}

export interface RouteRetry {
  /** The answers retried besides connection errors and timeouts: a subset of 500, 502, 503, 504, ascending. */
  readonly codes: readonly number[];
  /** Retries after the first try (1 to 10). */
  readonly attempts: number;
}

export interface WeightedBackend {
  readonly backend: string;
  /** 1 to 1,000,000 (the CRD's bound); weight-0 backendRefs are left out. */
  readonly weight: number;
  /** The backendRef's own header filters, applied after the rule's when it is drawn. */
  readonly requestHeaders?: HeaderEdits;
  readonly responseHeaders?: HeaderEdits;
}

/** Header edits: names as given (HTTP names are caseless), values checked. */
export interface HeaderEdits {
  readonly set: ReadonlyArray<{ readonly name: string; readonly value: string }>;
  readonly add: ReadonlyArray<{ readonly name: string; readonly value: string }>;
  readonly remove: readonly string[];
}

/** A new path: the whole of it, or the matched prefix (the route entry's `path`) replaced. */
export interface PathReplacement {
  readonly type: 'ReplaceFullPath' | 'ReplacePrefixMatch';
  readonly value: string;
}

export interface RouteFilters {
  readonly requestHeaders?: HeaderEdits;
  readonly responseHeaders?: HeaderEdits;
  /** Answer with a redirect; '' and 0 keep the request's scheme, host, the scheme's port. */
  readonly redirect?: { readonly scheme: string; readonly hostname: string; readonly port: number; readonly path: PathReplacement | null; readonly code: 301 | 302 | 303 | 307 | 308 };
  /** Rewrite what the upstream gets: its Host ('' keeps it) and path. */
  readonly rewrite?: { readonly hostname: string; readonly path: PathReplacement | null };
  /** RequestMirror: a copy of numerator/denominator of the requests goes to each backend (lua/mirror.lua), its answer unused. */
  readonly mirrors?: ReadonlyArray<{ readonly backend: string; readonly numerator: number; readonly denominator: number }>;
  /** CORS: what lua/route_cors.lua serves (the route table's `cors`, sent beside the other filters). */
  readonly cors?: RouteCors;
}

/** A route's CORS (lua/route_cors.lua): the pattern an allowed Origin matches ('' = every origin, answered `*`) and the headers after Access-Control-Allow-Origin. */
export interface RouteCors {
  readonly origin: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** Allow-Methods / Allow-Headers take the preflight's Access-Control-Request-Method / -Headers when it has them (a `*` with credentials). */
  readonly echoMethods?: true;
  readonly echoHeaders?: true;
}

/** A value test of a request header or query parameter: equal, or a PCRE2 pattern found in it. */
export interface ValueMatch {
  readonly name: string;
  readonly type: 'Exact' | 'RegularExpression';
  readonly value: string;
}

export interface RouteConditions {
  /** '' = any method. */
  readonly method: string;
  /** Header names lower case; every one must match. */
  readonly headers: readonly ValueMatch[];
  /** Query parameter names as given (case-sensitive); the first value of a name is tested. */
  readonly query: readonly ValueMatch[];
}

/** A host's TLS settings from its Ingresses (../ingress/server-tls.ts). */
export interface ServerTLSSettings {
  /** auth-tls-*: the settings, or why they cannot be used (the host answers 403). */
  readonly authTLS: AuthTLSSetting | null;
  /** proxy-ssl-* for the whole server (the renderer leaves it out under proxy-ssl-location-only). */
  readonly proxySSL: ProxySSLConfig | null;
  /** '' keeps the ConfigMap's. */
  readonly sslCiphers: string;
  /** null keeps the ConfigMap's. */
  readonly sslPreferServerCiphers: boolean | null;
}

export interface Server {
  /** Host name; `_` is the default server. */
  readonly hostname: string;
  readonly aliases: readonly string[];
  readonly sslPassthrough: boolean;
  /** Certificate uid (key of Configuration.certificates), `fallback` (FALLBACK_UID: NGINX's self-signed one), or null (no TLS). */
  readonly certificate: string | null;
  /** `namespace/name` of the TLS Secret the certificate came from, if any. */
  readonly tlsSecret: string | null;
  readonly redirectFromToWWW: boolean;
  /** Host-wide regex mode: some location uses use-regex or a rewrite-target ≠ its path. */
  readonly useRegex: boolean;
  /** Only set when snippets are allowed; otherwise ''. */
  readonly serverSnippet: string;
  /** Client certificates, backend TLS and ciphers of the host (auth-tls-*, proxy-ssl-*, ssl-ciphers); absent when none is set. */
  readonly tlsSettings?: ServerTLSSettings;
  readonly locations: readonly Location[];
  /**
   * Why the host's routes are a server block of nginx.conf (a change reloads NGINX), or null
   * when they are dynamic: matched and applied per request by the Lua router from the route
   * table (a change is POSTed). The rule: ../ingress/dynamic-routes.ts.
   */
  readonly staticBecause: string | null;
  /**
   * Set on a `*.x` host of the Gateway front end, whose wildcard covers one or more labels
   * (Gateway API); absent, a wildcard covers exactly one label (Ingress, as ingress-nginx).
   */
  readonly wildcardCoversLabels?: 'several';
}

export interface Certificate {
  /** Stable id: hash of the PEM. */
  readonly uid: string;
  /** `namespace/name` of the Secret. */
  readonly secret: string;
  /** Certificate chain + private key, PEM. */
  readonly pem: string;
  readonly hosts: readonly string[];
  notAfter: string; // ISO time
}

export interface L4Service {
  readonly port: number;
  readonly backend: { readonly namespace: string; readonly name: string; readonly port: string };
  readonly endpoints: readonly Endpoint[];
  readonly proxyProtocol: { readonly decode: boolean; readonly encode: boolean };
}

export interface Configuration {
  /** Sorted by hostname, `_` first. */
  readonly servers: readonly Server[];
  /** Sorted by name, `upstream-default-backend` included. */
  readonly backends: readonly Backend[];
  readonly tcpEndpoints: readonly L4Service[];
  readonly udpEndpoints: readonly L4Service[];
  /** uid → certificate. */
  readonly certificates: Readonly<Record<string, Certificate>>;
  /** uid of the --default-ssl-certificate, or null (self-signed fallback). */
  readonly defaultCertificate: string | null;
  readonly settings: Readonly<NginxSettings>;
  /**
   * --enable-dynamic-routes: the default server (and every static wildcard server) hands
   * requests for dynamic hosts to the Lua router, whether or not any host is dynamic yet.
   */
  readonly dynamicRoutes: boolean;
  /**
   * Gateway listener ports other than 80 and 443 (src/model/gateway/listener-ports.ts), with the
   * port NGINX listens on for each: a server of its own that only the Lua router answers in,
   * over TLS (`tls`) for HTTPS listeners. Absent or empty: none.
   */
  readonly listenerPorts?: ReadonlyArray<{ readonly port: number; readonly local: number; readonly tls?: true }>;
  /**
   * The router's TLS locations (src/model/gateway/backend-tls.ts): one per distinct BackendTLSPolicy
   * CA bundle, hostname and Gateway client certificate that a dynamic host's backend needs,
   * sorted by id. Absent or empty: none.
   */
  readonly backendTLSLocations?: readonly BackendTLSLocation[];
  /**
   * The Gateway API's HTTPS listener table (client certificate validation, misdirected
   * requests), posted with /configuration/servers; absent without a served HTTPS listener.
   * Its shape is the Gateway front end's (src/model/gateway/frontend-tls.ts).
   */
  readonly frontends?: {
    readonly names: Readonly<Record<string, number>>;
    readonly policies: ReadonlyArray<{ readonly ca: string | null; readonly insecure: boolean } | null>;
    readonly catchAll?: string;
    readonly portCatchAll?: Readonly<Record<string, string>>;
    readonly tlsOnly: readonly string[];
  };
}
