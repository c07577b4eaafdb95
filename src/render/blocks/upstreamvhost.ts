// upstream-vhost group: the Host header sent upstream (a variable such as `$host` is expanded, as
// ingress-nginx's quoted value is).
import * as f from '../filters.js';
import type { RenderBlock } from './types.js';

export const upstreamVhostBlock: RenderBlock = {
  group: 'upstreamvhost',
  applied: 'directives',
  location: {
    headers: ({ loc }) => (loc.upstreamVhost === '' ? null : { host: f.quoteWithVariables(loc.upstreamVhost, 'upstream-vhost') }),
  },
};
