// http2-push-preload group: http2_push_preload in the location (HTTPS with use-http2 only).
import { directives } from './layout.js';
import type { RenderBlock } from './types.js';

export const http2PushPreloadBlock: RenderBlock = {
  group: 'http2pushpreload',
  applied: 'directives',
  location: {
    proxy: ({ loc }) => (loc.settings.http2PushPreload ? directives(['http2_push_preload on']) : ''),
  },
};
