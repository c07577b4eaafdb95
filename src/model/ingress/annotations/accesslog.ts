// access-log group (ingress-nginx's "log" group): turn the access log of the Ingress's locations
// on or off, and log their rewrites (enable-rewrite-log) to the error log.
import { bool } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'enable-access-log': 'Low', 'enable-rewrite-log': 'Low' } as const;

export interface AccessLogValue {
  readonly accessLog: boolean;
  /** rewrite_log: NGINX logs each rewrite at notice level. */
  readonly rewriteLog: boolean;
}

const fields = { accessLog: 'location', rewriteLog: 'location' } as const;

export const accessLogGroup: AnnotationGroup<AccessLogValue, typeof fields> = {
  name: 'accesslog',
  keys,
  fields,
  docs: {
    'enable-access-log': { values: '"true" or "false"', default: 'ConfigMap disable-access-log (negated)', description: 'Log requests of the location.' },
    'enable-rewrite-log': { values: '"true" or "false"', default: 'false', description: 'Log how the location rewrites requests (rewrite_log; at notice level in the error log).' },
  },
  // A location logs as the http level does unless it turns logging off where the http level logs;
  // the router's rewrites are Lua's, which NGINX's rewrite_log does not see.
  perRequest: ({ accessLog, rewriteLog }, s) => {
    if (rewriteLog) return 'enable-rewrite-log needs rewrite_log in a location';
    return accessLog || !s.enableAccessLog || s.disableHttpAccessLog ? null : 'enable-access-log "false" needs access_log off in a location';
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    return { accessLog: r.get('enable-access-log', bool, ctx.settings.enableAccessLog), rewriteLog: r.get('enable-rewrite-log', bool, false) };
  },
};
