// http2-push-preload group: NGINX turns the backend's `Link: <…>; rel=preload` headers into
// HTTP/2 server pushes (http2_push_preload, which NGINX 1.22 still has; 1.25.1 removed push).
import { bool } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'http2-push-preload': 'Low' } as const;

export interface Http2PushPreloadValue {
  readonly http2PushPreload: boolean;
}

const fields = { http2PushPreload: 'location' } as const;

export const http2PushPreloadGroup: AnnotationGroup<Http2PushPreloadValue, typeof fields> = {
  name: 'http2pushpreload',
  keys,
  fields,
  docs: {
    'http2-push-preload': { values: '"true" or "false"', default: 'false', description: 'Push the resources the backend names in `Link: <…>; rel=preload` headers over HTTP/2 (http2_push_preload; NGINX 1.25.1 and browsers dropped server push).' },
  },
  parse(ing, ctx, warn) {
    return { http2PushPreload: annotationReader(ing, ctx, keys, warn).get('http2-push-preload', bool, false) };
  },
};
