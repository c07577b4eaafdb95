// access-log group: turn the access log of the Ingress's locations on or off.
import { bool } from '../validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'enable-access-log': 'Low' } as const;

export interface AccessLogValue {
  readonly accessLog: boolean;
}

const fields = { accessLog: 'location' } as const;

export const accessLogGroup: AnnotationGroup<AccessLogValue, typeof fields> = {
  name: 'accesslog',
  keys,
  fields,
  docs: {
    'enable-access-log': { values: '"true" or "false"', default: 'ConfigMap disable-access-log (negated)', description: 'Log requests of the location.' },
  },
  // A location logs as the http level does unless it turns logging off where the http level logs.
  perRequest: ({ accessLog }, s) => (accessLog || !s.enableAccessLog || s.disableHttpAccessLog ? null : 'enable-access-log "false" needs access_log off in a location'),
  parse(ing, ctx, warn) {
    return { accessLog: annotationReader(ing, ctx, keys, warn).get('enable-access-log', bool, ctx.settings.enableAccessLog) };
  },
};
