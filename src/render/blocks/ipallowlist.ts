// ipallowlist group: `allow` for each network, then `deny all`.
import * as f from '../filters.js';
import { directives } from './layout.js';
import type { RenderBlock } from './types.js';

export const ipAllowlistBlock: RenderBlock = {
  group: 'ipallowlist',
  applied: 'directives',
  location: {
    access: ({ loc }) => (loc.settings.allowlist.length === 0 ? ''
      : directives([...loc.settings.allowlist.map((c) => `allow ${f.cidr(c, 'whitelist-source-range')}`), 'deny all'])),
  },
};
