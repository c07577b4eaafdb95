// proxy group: timeouts, body and buffer sizes, buffering, next-upstream and HTTP version of
// the proxied request, and the rewriting of its answer's Set-Cookie and Location headers; every
// default comes from the ConfigMap.
import { int, nextUpstream, offset, onOff, oneOf, proxyBufferSize, proxyBuffersNumber, size } from '../../checks/validate.js';
import {
  busyBuffersProblem, cookieDomainRewrite, cookiePathRewrite, maxTempFileProblem, optionalSize, redirectFrom, redirectTo,
} from '../../checks/proxy-details.js';
import { annotationReader } from './reader.js';
import type { NginxSettings } from '../../core/config/settings.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'proxy-body-size': 'Medium',
  'proxy-connect-timeout': 'Low',
  'proxy-read-timeout': 'Low',
  'proxy-send-timeout': 'Low',
  'proxy-buffer-size': 'Low',
  'proxy-buffers-number': 'Low',
  'proxy-buffering': 'Low',
  'proxy-request-buffering': 'Low',
  'proxy-next-upstream': 'Medium',
  'proxy-next-upstream-timeout': 'Low',
  'proxy-next-upstream-tries': 'Low',
  'proxy-http-version': 'Low',
  'client-body-buffer-size': 'Low',
  'proxy-busy-buffers-size': 'Low',
  'proxy-max-temp-file-size': 'Low',
  'proxy-cookie-domain': 'Medium',
  'proxy-cookie-path': 'Medium',
  'proxy-redirect-from': 'Medium',
  'proxy-redirect-to': 'Medium',
} as const;

// As the ConfigMap's (../../core/config/keys.ts): ingress-nginx takes any integer.
const seconds = int(0, 2 ** 31 - 1);
const tries = int(0, 2 ** 31 - 1);
const httpVersion = oneOf(['1.0', '1.1'] as const);

export interface ProxyConfig {
  readonly connectTimeout: number;
  readonly sendTimeout: number;
  readonly readTimeout: number;
  /** NGINX size strings, validated (e.g. `1m`, `8k`). */
  readonly bodySize: string;
  readonly bufferSize: string;
  readonly buffersNumber: number;
  readonly buffering: 'on' | 'off';
  readonly requestBuffering: 'on' | 'off';
  readonly nextUpstream: readonly string[];
  readonly nextUpstreamTimeout: number;
  readonly nextUpstreamTries: number;
  readonly httpVersion: '1.0' | '1.1';
  readonly clientBodyBufferSize: string;
  /** '' is NGINX's own (twice bufferSize); otherwise checked against the buffers as NGINX does. */
  readonly busyBuffersSize: string;
  readonly maxTempFileSize: string;
  /** `off` or `domain replacement`. */
  readonly cookieDomain: string;
  /** `off` or `path replacement`. */
  readonly cookiePath: string;
  /** `off`, `default` or the text to replace. */
  readonly redirectFrom: string;
  /** The replacement, or `off`. */
  readonly redirectTo: string;
}

export interface ProxyValue {
  readonly proxy: ProxyConfig;
}

const fields = { proxy: 'location' } as const;

export const proxyGroup: AnnotationGroup<ProxyValue, typeof fields> = {
  name: 'proxy',
  keys,
  fields,
  docs: {
    'proxy-body-size': { values: 'size, k/m/g (e.g. 8m, 0 = unlimited)', default: 'ConfigMap proxy-body-size', description: 'client_max_body_size of the location.' },
    'proxy-connect-timeout': { values: 'seconds', default: 'ConfigMap proxy-connect-timeout', description: 'proxy_connect_timeout.' },
    'proxy-read-timeout': { values: 'seconds', default: 'ConfigMap proxy-read-timeout', description: 'proxy_read_timeout.' },
    'proxy-send-timeout': { values: 'seconds', default: 'ConfigMap proxy-send-timeout', description: 'proxy_send_timeout.' },
    'proxy-buffer-size': { values: 'size, 1 byte to 1g', default: 'ConfigMap proxy-buffer-size', description: 'proxy_buffer_size.' },
    'proxy-buffers-number': { values: 'integer 3..1024', default: 'ConfigMap proxy-buffers-number', description: 'Number of proxy_buffers.' },
    'proxy-buffering': { values: '"on" or "off"', default: 'ConfigMap proxy-buffering', description: 'proxy_buffering.' },
    'proxy-request-buffering': { values: '"on" or "off"', default: 'ConfigMap proxy-request-buffering', description: 'proxy_request_buffering.' },
    'proxy-next-upstream': { values: 'space-separated conditions (error timeout http_502 …)', default: 'ConfigMap proxy-next-upstream', description: 'When to try the next upstream.' },
    'proxy-next-upstream-timeout': { values: 'seconds (0 = no limit)', default: 'ConfigMap proxy-next-upstream-timeout', description: 'Time limit for passing a request to the next upstream.' },
    'proxy-next-upstream-tries': { values: 'integer (0 = no limit)', default: 'ConfigMap proxy-next-upstream-tries', description: 'Attempts to pass a request to the next upstream.' },
    'proxy-http-version': { values: '"1.0" or "1.1"', default: 'ConfigMap proxy-http-version', description: 'proxy_http_version.' },
    'client-body-buffer-size': { values: 'size (k or m)', default: 'ConfigMap client-body-buffer-size', description: 'client_body_buffer_size of the location.' },
    'proxy-busy-buffers-size': { values: 'size between proxy-buffer-size and all proxy buffers but one', default: 'ConfigMap proxy-busy-buffers-size', description: 'proxy_busy_buffers_size: buffers busy sending to the client while the answer is still read.', onInvalid: 'warning; the ConfigMap value is used, or NGINX\'s own (twice proxy-buffer-size) when that does not fit the location\'s buffers either' },
    'proxy-max-temp-file-size': { values: 'size: 0 (no temporary file), or at least proxy-buffer-size', default: 'ConfigMap proxy-max-temp-file-size', description: 'proxy_max_temp_file_size: the largest temporary file of a buffered answer.' },
    'proxy-cookie-domain': { values: '"off" or "domain replacement" (letters, digits, -._~/:; ~ starts a regex)', default: 'ConfigMap proxy-cookie-domain', description: 'proxy_cookie_domain: the Domain attribute of the backend\'s Set-Cookie headers is rewritten.' },
    'proxy-cookie-path': { values: '"off" or "path replacement"', default: 'ConfigMap proxy-cookie-path', description: 'proxy_cookie_path: the Path attribute of the backend\'s Set-Cookie headers is rewritten.' },
    'proxy-redirect-from': { values: '"off", "default" or the text to replace (~ starts a regex)', default: 'ConfigMap proxy-redirect-from', description: "proxy_redirect's first parameter: the text replaced in the backend's Location and Refresh headers." },
    'proxy-redirect-to': { values: '"off" or the replacement', default: 'ConfigMap proxy-redirect-to', description: "proxy_redirect's second parameter." },
  },
  perRequest: ({ proxy: p }, s) => proxyPerRequest(p, s),
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const s = ctx.settings;
    const bufferSize = r.get('proxy-buffer-size', proxyBufferSize, s.proxyBufferSize);
    const buffersNumber = r.get('proxy-buffers-number', proxyBuffersNumber, s.proxyBuffersNumber);
    return {
      proxy: {
        bodySize: r.get('proxy-body-size', offset, s.proxyBodySize),
        connectTimeout: r.get('proxy-connect-timeout', seconds, s.proxyConnectTimeout),
        readTimeout: r.get('proxy-read-timeout', seconds, s.proxyReadTimeout),
        sendTimeout: r.get('proxy-send-timeout', seconds, s.proxySendTimeout),
        bufferSize,
        buffersNumber,
        buffering: r.get('proxy-buffering', onOff, s.proxyBuffering),
        requestBuffering: r.get('proxy-request-buffering', onOff, s.proxyRequestBuffering),
        nextUpstream: r.get('proxy-next-upstream', nextUpstream, [...s.proxyNextUpstream]),
        nextUpstreamTimeout: r.get('proxy-next-upstream-timeout', seconds, s.proxyNextUpstreamTimeout),
        nextUpstreamTries: r.get('proxy-next-upstream-tries', tries, s.proxyNextUpstreamTries),
        httpVersion: r.get('proxy-http-version', httpVersion, s.proxyHttpVersion),
        clientBodyBufferSize: r.get('client-body-buffer-size', size, s.clientBodyBufferSize),
        ...buffersFit(r.get('proxy-busy-buffers-size', optionalSize, s.proxyBusyBuffersSize), r.get('proxy-max-temp-file-size', size, s.proxyMaxTempFileSize), bufferSize, buffersNumber, s, (k, m) => r.warn(k, m), r.has('proxy-buffer-size') ? 'proxy-buffer-size' : 'proxy-buffers-number'),
        cookieDomain: r.get('proxy-cookie-domain', cookieDomainRewrite, s.proxyCookieDomain),
        cookiePath: r.get('proxy-cookie-path', cookiePathRewrite, s.proxyCookiePath),
        redirectFrom: r.get('proxy-redirect-from', redirectFrom, s.proxyRedirectFrom),
        redirectTo: r.get('proxy-redirect-to', redirectTo, s.proxyRedirectTo),
      },
    };
  },
};

/**
 * The busy buffers and temporary file sizes NGINX accepts with the location's buffers: an
 * annotation that does not fit falls back to the ConfigMap's value, and a ConfigMap value that
 * does not fit this location's buffers to NGINX's own (NGINX would refuse the whole reload).
 */
function buffersFit(
  busy: string, maxTemp: string, bufferSize: string, number: number, s: { proxyBusyBuffersSize: string; proxyMaxTempFileSize: string },
  warn: (key: string, message: string) => void, buffersKey: string,
): { busyBuffersSize: string; maxTempFileSize: string } {
  let busyProblem = busyBuffersProblem(busy, bufferSize, number);
  if (busyProblem && busy !== s.proxyBusyBuffersSize) {
    warn('proxy-busy-buffers-size', `${busyProblem}; the ConfigMap's value is used`);
    busy = s.proxyBusyBuffersSize;
    busyProblem = busyBuffersProblem(busy, bufferSize, number);
  }
  if (busyProblem) {
    warn(buffersKey, `${busyProblem} (ConfigMap proxy-busy-buffers-size with this location's buffers); NGINX's own (twice proxy-buffer-size) is used`);
    busy = '';
  }
  let tempProblem = maxTempFileProblem(maxTemp, bufferSize);
  if (tempProblem && maxTemp !== s.proxyMaxTempFileSize) {
    warn('proxy-max-temp-file-size', `${tempProblem}; the ConfigMap's value is used`);
    maxTemp = s.proxyMaxTempFileSize;
    tempProblem = maxTempFileProblem(maxTemp, bufferSize);
  }
  if (tempProblem) {
    warn(buffersKey, `${tempProblem} (ConfigMap proxy-max-temp-file-size with this location's buffers); 1024m is used`);
    maxTemp = '1024m';
  }
  return { busyBuffersSize: busy, maxTempFileSize: maxTemp };
}

/** Every proxy setting but the timeouts and tries is a directive of the location's own once it differs from the ConfigMap's (the http level). */
function proxyPerRequest(p: ProxyConfig, s: NginxSettings): string | null {
  const own: Array<[boolean, string]> = [
    [p.bodySize !== s.proxyBodySize, 'proxy-body-size needs client_max_body_size in a location'],
    [p.clientBodyBufferSize !== s.clientBodyBufferSize, 'client-body-buffer-size needs client_body_buffer_size in a location'],
    [p.bufferSize !== s.proxyBufferSize || p.buffersNumber !== s.proxyBuffersNumber, 'proxy-buffer-size and proxy-buffers-number need proxy_buffers in a location'],
    [p.buffering !== s.proxyBuffering, 'proxy-buffering needs proxy_buffering in a location'],
    [p.requestBuffering !== s.proxyRequestBuffering, 'proxy-request-buffering needs proxy_request_buffering in a location'],
    [p.httpVersion !== s.proxyHttpVersion, 'proxy-http-version needs proxy_http_version in a location'],
    [p.nextUpstream.join(' ') !== s.proxyNextUpstream.join(' '), 'proxy-next-upstream needs proxy_next_upstream in a location'],
    [p.nextUpstreamTimeout !== s.proxyNextUpstreamTimeout, 'proxy-next-upstream-timeout needs proxy_next_upstream_timeout in a location'],
    // The Lua balancer applies these (src/model/core/route-settings.ts routeUpstream): set_timeouts
    // takes only durations above 0, and set_more_tries never goes beyond the http level's
    // proxy_next_upstream_tries (NGINX's hard limit in the router's location).
    [p.nextUpstreamTries !== s.proxyNextUpstreamTries && s.proxyNextUpstreamTries !== 0 && (p.nextUpstreamTries === 0 || p.nextUpstreamTries > s.proxyNextUpstreamTries),
      `proxy-next-upstream-tries ${p.nextUpstreamTries === 0 ? '0 (no limit)' : p.nextUpstreamTries} is above the ConfigMap's ${s.proxyNextUpstreamTries}, the most the Lua balancer may try`],
    [p.connectTimeout !== s.proxyConnectTimeout && p.connectTimeout === 0, 'proxy-connect-timeout 0 is not a timeout the Lua balancer can set'],
    [p.sendTimeout !== s.proxySendTimeout && p.sendTimeout === 0, 'proxy-send-timeout 0 is not a timeout the Lua balancer can set'],
    [p.readTimeout !== s.proxyReadTimeout && p.readTimeout === 0, 'proxy-read-timeout 0 is not a timeout the Lua balancer can set'],
    [p.busyBuffersSize !== s.proxyBusyBuffersSize, 'proxy-busy-buffers-size needs proxy_busy_buffers_size in a location'],
    [p.maxTempFileSize !== s.proxyMaxTempFileSize, 'proxy-max-temp-file-size needs proxy_max_temp_file_size in a location'],
    [p.cookieDomain !== s.proxyCookieDomain, 'proxy-cookie-domain needs proxy_cookie_domain in a location'],
    [p.cookiePath !== s.proxyCookiePath, 'proxy-cookie-path needs proxy_cookie_path in a location'],
    [p.redirectFrom !== s.proxyRedirectFrom || p.redirectTo !== s.proxyRedirectTo, 'proxy-redirect-from/-to need proxy_redirect in a location'],
  ];
  for (const [differs, reason] of own) if (differs) return reason;
  return null;
}
