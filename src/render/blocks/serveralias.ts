// server-alias group: further names in the host's server_name.
import * as f from '../filters.js';
import type { RenderBlock } from './types.js';

export const serverAliasBlock: RenderBlock = {
  group: 'serveralias',
  applied: 'directives',
  server: {
    names: ({ server }) => server.aliases.map((a) => f.host(a, 'server-alias')),
  },
};
