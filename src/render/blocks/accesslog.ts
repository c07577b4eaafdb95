// access-log group: a location that logs nothing turns its access log off, keeping the metrics
// log (`access_log off` would stop that one too); enable-rewrite-log turns rewrite_log on.
import { metricsAccessLog } from '../metrics-log.js';
import { directives } from './layout.js';
import type { RenderBlock } from './types.js';

export const accessLogBlock: RenderBlock = {
  group: 'accesslog',
  applied: 'directives',
  location: {
    access: ({ loc, runtime }) => (loc.settings.accessLog ? '' : directives([runtime.metricsLog ? metricsAccessLog(runtime.metricsLog) : 'access_log off']))
      + (loc.settings.rewriteLog ? directives(['rewrite_log on']) : ''),
  },
};
