// The metrics log (--enable-metrics): NGINX's log module writes one tab-separated line per
// request of an Ingress location to a file under its prefix, buffered in each worker and
// flushed every second; the controller reads it and keeps ingress-nginx's request metrics.
// NGINX's C log module costs next to nothing per request, where a Lua log phase doing the same
// cost about a third of NGINX's CPU per request (docs/performance.md).
import { join } from 'node:path';
import { quoteLiteral } from './filters.js';

/** The fields of a metrics line, in order (what the controller parses). */
export const METRICS_LOG_FIELDS = [
  'namespace', 'ingress_name', 'service_name', 'location_path', 'proxy_alternative_upstream_name',
  'request_method', 'status', 'host', 'request_length', 'bytes_sent', 'request_time',
  'upstream_connect_time', 'upstream_header_time', 'upstream_response_time',
] as const;

/** `log_format` name and format. NGINX's default escaping turns tabs and quotes inside values into \xXX. */
export const METRICS_LOG_FORMAT_NAME = 'ingress_rx_metrics';
export const METRICS_LOG_FORMAT = METRICS_LOG_FIELDS.map((f) => `$${f}`).join('\\t');

/**
 * The format of a request the Lua router served (a dynamic host): the four route fields come from
 * one variable the router writes per request, `namespace\tingress\tservice\tpath`, whose tabs
 * NGINX's escaping writes as `\x09` (one write instead of four; the reader splits them again). A
 * short name: a write by name costs ~15 instructions per character of it.
 */
export const METRICS_LOG_ROUTED_FORMAT_NAME = 'ingress_rx_metrics_routed';
export const ROUTE_LABELS_VARIABLE = 'irx_labels';
export const METRICS_LOG_ROUTED_FORMAT = [`$${ROUTE_LABELS_VARIABLE}`, ...METRICS_LOG_FIELDS.slice(4).map((f) => `$${f}`)].join('\\t');
/** How many fields a routed line has; its first holds the first four fields of a line. */
export const METRICS_LOG_ROUTED_FIELDS = METRICS_LOG_FIELDS.length - 3;

/** The file NGINX writes: under its prefix, reachable only through the file system. */
export function metricsLogPath(prefix: string): string {
  return join(prefix, 'logs', 'metrics.log');
}

/**
 * The `access_log` directive of the metrics log. A location that turns its access log off
 * (enable-access-log "false") repeats it, because `access_log off` would stop it too; NGINX
 * shares one buffer per file between the directives that name it with the same parameters.
 */
export function metricsAccessLog(path: string, format = METRICS_LOG_FORMAT_NAME): string {
  return `access_log ${quoteLiteral(path, 'metrics log')} ${format} buffer=64k flush=1s`;
}

/**
 * The http level's metrics log format and access_log; with dynamic routes, the routed format too
 * and its variable, "-" (as an unset $namespace: the line is skipped) until the router sets it.
 */
export function metricsLogHttp(path: string, dynamicRoutes: boolean): string {
  const routed = dynamicRoutes
    ? `map "" $${ROUTE_LABELS_VARIABLE} {\n        default "-";\n    }\n    log_format ${METRICS_LOG_ROUTED_FORMAT_NAME} '${METRICS_LOG_ROUTED_FORMAT}';\n    `
    : '';
  return `log_format ${METRICS_LOG_FORMAT_NAME} '${METRICS_LOG_FORMAT}';\n    ${routed}${metricsAccessLog(path)};`;
}
