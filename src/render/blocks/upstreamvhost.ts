// upstream-vhost group: the Host header sent upstream.
import * as f from '../filters.js';
import type { RenderBlock } from './types.js';

export const upstreamVhostBlock: RenderBlock = {
  group: 'upstreamvhost',
  applied: 'directives',
  location: {
    headers: ({ loc }) => (loc.upstreamVhost === '' ? null : { host: f.quote(loc.upstreamVhost, 'upstream-vhost') }),
  },
};
