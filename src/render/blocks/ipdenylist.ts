// ipdenylist group: `deny` for each network. Printed before the allowlist, as ingress-nginx does:
// NGINX takes the first rule that matches, so an address on both lists is refused.
import * as f from '../filters.js';
import { directives } from './layout.js';
import type { RenderBlock } from './types.js';

export const ipDenylistBlock: RenderBlock = {
  group: 'ipdenylist',
  applied: 'directives',
  location: {
    access: ({ loc }) => (loc.settings.denylist.length === 0 ? '' : directives(loc.settings.denylist.map((c) => `deny ${f.cidr(c, 'denylist-source-range')}`))),
  },
};
