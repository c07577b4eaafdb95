// server-alias group: further names in the host's server_name.
import * as f from '../filters.js';
import { NONE } from './layout.js';
import type { RenderBlock } from './types.js';

export const serverAliasBlock: RenderBlock = {
  group: 'serveralias',
  applied: 'directives',
  server: {
    // One shared empty list for a server without aliases: an empty list from map() does not
    // always have the same hidden class (interpreted or optimised), and serverView, iterating
    // it, was deoptimised and compiled again in every process's first render.
    names: ({ server }) => (server.aliases.length === 0 ? NONE : server.aliases.map((a) => f.host(a, 'server-alias'))),
  },
};
