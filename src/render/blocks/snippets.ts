// snippets group: configuration-snippet at the end of each location of the Ingress, server-snippet
// in its host's server block, each read by the snippet filter. A snippet may set headers
// (directly or through an include) or $proxy_upstream_name, and a server-snippet may set the
// header filter phase: the frames leave those to it.
import * as f from '../filters.js';
import { I } from './layout.js';
import type { RenderBlock } from './types.js';

/** A snippet that may set proxy headers itself (directly or through an include). */
const SETS_HEADERS = /\b(proxy_set_header|grpc_set_header|include)\b/;
const SETS_HEADER_FILTER = /\bheader_filter_by_lua/;

export const snippetsBlock: RenderBlock = {
  group: 'snippets',
  applied: 'directives',
  location: {
    lua: ({ loc }) => (loc.configurationSnippet === '' ? null : { backendFromSnippet: true }),
    headers: ({ loc, server }) => (SETS_HEADERS.test(loc.configurationSnippet) || SETS_HEADERS.test(server.serverSnippet) ? {} : null),
    snippet: ({ loc }) => (loc.configurationSnippet === '' ? ''
      : `${I}# configuration-snippet\n${I}${f.snippet(loc.configurationSnippet, 'configuration-snippet').split('\n        ').join(`\n${I}`)}\n`),
  },
  server: {
    directives: ({ server }) => (server.serverSnippet === '' ? ''
      : `\n        # server-snippet\n        ${f.snippet(server.serverSnippet, 'server-snippet')}\n`),
    ownsHeaderFilter: ({ server }) => SETS_HEADER_FILTER.test(server.serverSnippet),
  },
};
