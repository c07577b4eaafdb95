// Typed settings from the main ConfigMap (--configmap), with ingress-nginx's defaults.
// The parser in ./parse.ts fills these from ConfigMap data; the renderer reads only these.
// Starter set: the ConfigMap-parser work extends this interface (keep names stable).

export interface NginxSettings {
  // SSL / redirects
  sslRedirect: boolean;
  forceSSLRedirect: boolean;
  httpRedirectCode: number;
  hsts: boolean;
  hstsMaxAge: number;
  hstsIncludeSubdomains: boolean;
  hstsPreload: boolean;
  sslProtocols: string[];
  sslCiphers: string;

  // proxy defaults (annotations default from these)
  proxyConnectTimeout: number;
  proxyReadTimeout: number;
  proxySendTimeout: number;
  proxyBodySize: string;
  proxyBufferSize: string;
  proxyBuffersNumber: number;
  proxyBuffering: 'on' | 'off';
  proxyRequestBuffering: 'on' | 'off';
  proxyNextUpstream: string[];
  proxyNextUpstreamTimeout: number;
  proxyNextUpstreamTries: number;
  proxyHttpVersion: '1.0' | '1.1';
  clientBodyBufferSize: string;

  // upstreams
  loadBalance: string;
  upstreamKeepaliveConnections: number;
  upstreamKeepaliveTimeout: number;
  upstreamKeepaliveRequests: number;

  // headers
  useForwardedHeaders: boolean;
  computeFullForwardedFor: boolean;
  forwardedForHeader: string;
  /** header name → value, from the ConfigMap named by `add-headers`. */
  addHeaders: Record<string, string>;
  /** header name → value, from the ConfigMap named by `proxy-set-headers`. */
  proxySetHeaders: Record<string, string>;

  // blocking
  blockCidrs: string[];
  blockUserAgents: string[];
  blockReferers: string[];

  // snippets and risk
  allowSnippetAnnotations: boolean;
  annotationsRiskLevel: 'Low' | 'Medium' | 'High' | 'Critical';
  annotationValueWordBlocklist: string[];
  strictValidatePathType: boolean;

  // workers, logs, misc
  workerProcesses: string;
  workerConnections: number;
  enableAccessLog: boolean;
  useGeoip2: boolean;
  customHttpErrors: number[];
  serverNamesHashBucketSize: number;
  serverNamesHashMaxSize: number;
  variablesHashBucketSize: number;
  variablesHashMaxSize: number;
  keepAlive: number;
  keepAliveRequests: number;
  useHttp2: boolean;
  enableCors?: never; // CORS is per-Ingress only
}
