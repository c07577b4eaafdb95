// The directives of ConfigMap keys that nginx.conf.liquid prints outside the servers: the main
// and events contexts (CPU affinity, multi_accept, debug_connection, main-snippet), the http
// context (redirect and proxy-answer defaults, default_type, gzip_disable, aio_write, Lua shared
// dictionaries, http-snippet), the log targets (files or syslog, access-log-params) and the
// stream context (proxy-stream-*, stream-snippets). Every value is printed
// through a filter.
import type { NginxSettings } from '../model/core/config/settings.js';
import type { Server } from '../model/core/types.js';
import * as f from './filters.js';
import { RenderError } from './filters.js';
import { httpProxyDetails } from './blocks/proxy.js';
import type { NginxRuntime } from './runtime.js';

/** The Lua shared dictionaries ingress-rx's Lua uses, in KB (lua-shared-dicts may resize them). */
export const LUA_SHARED_DICTS: Readonly<Record<string, number>> = {
  configuration_data: 20 * 1024,
  certificate_data: 20 * 1024,
  certificate_servers: 5 * 1024,
  balancer_ewma: 10 * 1024,
  balancer_ewma_last_touched_at: 10 * 1024,
  balancer_ewma_locks: 1024,
};

const line = (d: string, indent = '    '): string => `${indent}${d};\n`;

/** Text of an operator snippet, each of its lines indented for its context. */
function snippetAt(text: string, field: string, context: Parameters<typeof f.operatorSnippet>[2], indent: string): string {
  if (text === '') return '';
  return `${indent}# ${field} (ConfigMap)\n${indent}${f.operatorSnippet(text, field, context).split('\n').join(`\n${indent}`)}\n`;
}

/** `syslog:server=<address>:<port>`: an IP address only (NGINX resolves a name once, at load, and fails the reload if it cannot). */
function syslogTarget(s: NginxSettings): string {
  const host = f.cidr(s.syslogHost, 'syslog-host');
  return `syslog:server=${host.includes(':') ? `[${host}]` : host}:${f.num(s.syslogPort, 'syslog-port')}`;
}

function accessLogParams(s: NginxSettings): string {
  if (s.accessLogParams === '') return '';
  if (!/^[a-z]+(=[0-9A-Za-z.]+)?( [a-z]+(=[0-9A-Za-z.]+)?)*$/.test(s.accessLogParams)) throw new RenderError('access-log-params', `not access_log parameters: ${JSON.stringify(s.accessLogParams.slice(0, 100))}`);
  return ` ${s.accessLogParams}`;
}

/** Where NGINX writes its logs: quoted paths, or syslog with enable-syslog. */
export function logTargets(s: NginxSettings, paths: { error: string; http: string; stream: string }): { error: string; http: string; stream: string; params: string } {
  if (s.enableSyslog && s.syslogHost !== '') {
    const t = syslogTarget(s);
    // NGINX refuses buffer=, gzip and flush= on a syslog target: they apply to files only.
    return { error: t, http: t, stream: t, params: '' };
  }
  return {
    error: f.quoteLiteral(paths.error, 'error-log-path'),
    http: f.quoteLiteral(paths.http, 'access-log-path'),
    stream: f.quoteLiteral(paths.stream, 'access-log-path'),
    params: accessLogParams(s),
  };
}

/** The log targets of the ConfigMap's paths, else the runtime's. */
export function configuredLogTargets(s: NginxSettings, runtime: NginxRuntime): ReturnType<typeof logTargets> {
  return logTargets(s, {
    error: s.errorLogPath || runtime.errorLogPath,
    http: s.httpAccessLogPath || s.accessLogPath || runtime.accessLogPath,
    stream: s.streamAccessLogPath || s.accessLogPath || runtime.accessLogPath,
  });
}

/**
 * The http level's access_log (without `;`), '' when the access log is off. `if=$loggable` only
 * with skip-access-log-urls: otherwise $loggable is always 1 and the condition a per-request
 * evaluation for nothing (the map stays defined for whatever else reads it).
 */
export function httpAccessLog(s: NginxSettings, runtime: NginxRuntime): string {
  if (!s.enableAccessLog || s.disableHttpAccessLog) return '';
  const logs = configuredLogTargets(s, runtime);
  const condition = s.skipAccessLogUrls.length > 0 ? ' if=$loggable' : '';
  return `access_log ${logs.http} upstreaminfo${condition}${logs.params}`;
}

/** Directives of the main context (after worker_processes). */
export function mainDirectives(s: NginxSettings): string {
  let out = '';
  if (s.workerCpuAffinity !== '') {
    if (!/^(auto( [01]{1,64})?|[01]{1,64}( [01]{1,64})*)$/.test(s.workerCpuAffinity)) throw new RenderError('worker-cpu-affinity', 'not CPU masks');
    out += line(`worker_cpu_affinity ${s.workerCpuAffinity}`, '');
  }
  return out + snippetAt(s.mainSnippet, 'main-snippet', 'main', '');
}

/** Directives of the events block. */
export function eventsDirectives(s: NginxSettings): string {
  let out = line(`multi_accept ${f.onoff(s.enableMultiAccept, 'enable-multi-accept')}`);
  for (const c of s.debugConnections) out += line(`debug_connection ${f.cidr(c, 'debug-connections')}`);
  return out;
}

/** lua_shared_dict lines: ours at their (possibly resized) sizes, then the operator's own (each name once). */
export function luaSharedDicts(s: NginxSettings): string {
  const sizes = { ...LUA_SHARED_DICTS, ...(s.enableOCSP ? { ocsp_response_cache: 5 * 1024 } : {}), ...s.luaSharedDicts };
  return Object.entries(sizes).map(([name, kb]) => {
    if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) throw new RenderError('lua-shared-dicts', `not a dictionary name: ${JSON.stringify(name.slice(0, 70))}`);
    return line(`lua_shared_dict ${name} ${kb % 1024 === 0 ? `${f.num(kb / 1024, 'lua-shared-dicts')}m` : `${f.num(kb, 'lua-shared-dicts')}k`}`);
  }).join('');
}

/** The http context's defaults from ConfigMap keys (redirects, the proxied answer, types, gzip, aio). */
export function httpDirectives(s: NginxSettings): string {
  let out = line(`default_type ${mimeType(s.defaultType)}`);
  out += line(`absolute_redirect ${f.onoff(!s.relativeRedirects, 'relative-redirects')}`);
  out += line(`port_in_redirect ${f.onoff(s.usePortInRedirects, 'use-port-in-redirects')}`);
  if (s.enableAioWrite) out += line('aio_write on');
  if (s.grpcBufferSizeKb > 0) out += line(`grpc_buffer_size ${f.num(s.grpcBufferSizeKb, 'grpc-buffer-size-kb')}k`);
  if (s.useGzip && s.gzipDisable !== '') out += line(`gzip_disable ${f.quote(s.gzipDisable, 'gzip-disable')}`);
  out += httpProxyDetails(s);
  return out;
}

function mimeType(v: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9!#&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#&^_.+-]*$/.test(v)) throw new RenderError('default-type', `not a MIME type: ${JSON.stringify(v.slice(0, 100))}`);
  return v;
}

/** The http-snippet, last in the http context before the servers. */
export function httpSnippet(s: NginxSettings): string {
  return snippetAt(s.httpSnippet, 'http-snippet', 'http', '    ');
}

/** `$http_<name>` of a request header. */
export function headerVariable(name: string, field: string): string {
  return `$http_${f.headerName(name, field).toLowerCase().replace(/-/g, '_')}`;
}

/**
 * With use-proxy-protocol and use-forwarded-headers: a PROXY peer in proxy-real-ip-cidr is
 * believed about forwarded-for-header, any other gives its PROXY address. The real-IP module
 * reads no variables, so the choice is passed in a request header of its own.
 */
export function forwardedForProxyProtocol(s: NginxSettings): string {
  const trusted = s.proxyRealIpCidr.map((c) => `        ${f.cidr(c, 'proxy-real-ip-cidr')} 1;\n`).join('');
  return `    geo $proxy_protocol_addr $proxy_protocol_addr_trusted {\n        default 0;\n${trusted}    }\n`
    + `    map $proxy_protocol_addr_trusted $forwarded_for_proxy_protocol {\n        default $proxy_protocol_addr;\n        1 ${headerVariable(s.forwardedForHeader, 'forwarded-for-header')};\n    }\n`
    + `    more_set_input_headers ${f.quoteLiteral(`${f.headerName(s.forwardedForProxyProtocolHeader, 'forwarded-for-proxy-protocol-header')}: $forwarded_for_proxy_protocol`, 'forwarded-for-proxy-protocol-header')};\n`;
}

/**
 * The real-IP module reads forwarded-for-proxy-protocol-header before more_set_input_headers
 * sets it, so a client that sends the header itself would choose its own address: such a
 * request is refused (400) in the server rewrite phase, which still sees the client's header.
 */
export function spoofedClientGuard(s: NginxSettings): string {
  if (!(s.useProxyProtocol && s.useForwardedHeaders)) return '';
  return `        if (${headerVariable(s.forwardedForProxyProtocolHeader, 'forwarded-for-proxy-protocol-header')}) {\n            return 400;\n        }\n`;
}

/** The stream context's proxy settings (proxy-stream-*). */
export function streamDirectives(s: NginxSettings): string {
  let out = line(`proxy_timeout ${f.duration(s.proxyStreamTimeout, 'proxy-stream-timeout')}`);
  out += line(`proxy_next_upstream ${f.onoff(s.proxyStreamNextUpstream, 'proxy-stream-next-upstream')}`);
  out += line(`proxy_next_upstream_timeout ${f.duration(s.proxyStreamNextUpstreamTimeout, 'proxy-stream-next-upstream-timeout')}`);
  out += line(`proxy_next_upstream_tries ${f.num(s.proxyStreamNextUpstreamTries, 'proxy-stream-next-upstream-tries')}`);
  out += line(`proxy_responses ${f.num(s.proxyStreamResponses, 'proxy-stream-responses')}`);
  // As ingress-nginx's stream block: with enable-real-ip, a TCP service decoding PROXY (its
  // tcp-services entry's :PROXY) logs the address the header gives when the peer is trusted.
  if (s.enableRealIp) for (const c of s.proxyRealIpCidr) out += line(`set_real_ip_from ${f.cidr(c, 'proxy-real-ip-cidr')}`);
  return out;
}

/**
 * The stream-snippets: the operator's, then each Ingress's once (its locations all carry it). A
 * snippet the renderer refuses is left out with a problem naming its Ingress.
 */
export function streamSnippets(s: NginxSettings, snippets: Iterable<IngressStreamSnippet>, problem: (ingress: string, message: string) => void): string {
  let out = snippetAt(s.streamSnippet, 'stream-snippet', 'stream', '    ');
  const seen = new Set<string>();
  for (const { ingress, snippet } of snippets) {
    if (seen.has(ingress)) continue;
    seen.add(ingress);
    try {
      out += `    # stream-snippet of ${f.comment(ingress)}\n    ${f.streamSnippet(snippet).split('\n').join('\n    ')}\n`;
    } catch (err) {
      problem(ingress, (err as Error).message);
    }
  }
  return out;
}

export interface IngressStreamSnippet { readonly ingress: string; readonly snippet: string }

/** The stream-snippets of a server's Ingresses, each Ingress once (the renderer memoises them per Server object). */
export function streamSnippetsOf(server: Server): readonly IngressStreamSnippet[] {
  let out: IngressStreamSnippet[] | null = null;
  for (const loc of server.locations) {
    if (loc.settings.streamSnippet === '' || !loc.ingress) continue;
    const ingress = `${loc.ingress.namespace}/${loc.ingress.name}`;
    out ??= [];
    if (!out.some((x) => x.ingress === ingress)) out.push({ ingress, snippet: loc.settings.streamSnippet });
  }
  return out ?? NO_SNIPPETS;
}
const NO_SNIPPETS: readonly IngressStreamSnippet[] = [];

/**
 * The addresses to listen on: bind-address replaces the runtime's wildcards by family (`*` by
 * its IPv4 addresses, `[::]` by its IPv6 ones), and disable-ipv6 drops IPv6 listeners. Explicit
 * runtime addresses (local mode's 127.0.0.1) are kept.
 */
export function listenAddresses(s: NginxSettings, rt: NginxRuntime): string[] {
  const v4 = s.bindAddress.filter((a) => !a.includes(':'));
  const v6 = s.bindAddress.filter((a) => a.includes(':')).map((a) => `[${a}]`);
  const out: string[] = [];
  for (const a of rt.listenAddresses) {
    if (a === '*' && v4.length > 0) out.push(...v4);
    else if (a === '[::]' && v6.length > 0) out.push(...v6);
    else out.push(a);
  }
  const kept = s.disableIpv6 ? out.filter((a) => !a.includes(':')) : out;
  return [...new Set(kept.length > 0 ? kept : rt.listenAddresses)];
}
