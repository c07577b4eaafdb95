// snippets group: configuration-snippet at the end of each location of the Ingress, server-snippet
// in its host's server block, each read by the snippet filter; then the operator's location-snippet
// and server-snippet (ConfigMap keys) in every location and server, as ingress-nginx orders them.
// A snippet may set headers (directly or through an include) or $proxy_upstream_name, and a
// server-snippet may set the header filter phase: the frames leave those to it. stream-snippets
// go to the stream block (../stream.ts).
import * as f from '../filters.js';
import { I } from './layout.js';
import type { RenderBlock } from './types.js';

/** A snippet that may set proxy headers itself (directly or through an include). */
const SETS_HEADERS = /\b(proxy_set_header|grpc_set_header|include)\b/;
const SETS_HEADER_FILTER = /\bheader_filter_by_lua/;

const atLocation = (text: string): string => text.split('\n        ').join(`\n${I}`);
const indented = (text: string, depth: string): string => text.split('\n').join(`\n${depth}`);

export const snippetsBlock: RenderBlock = {
  group: 'snippets',
  applied: 'directives',
  location: {
    lua: ({ loc, settings }) => (loc.settings.configurationSnippet === '' && settings.locationSnippet === '' ? null : { backendFromSnippet: true }),
    headers: ({ loc, server, settings }) => (SETS_HEADERS.test(loc.settings.configurationSnippet) || SETS_HEADERS.test(server.serverSnippet)
      || SETS_HEADERS.test(settings.locationSnippet) || SETS_HEADERS.test(settings.serverSnippet) ? {} : null),
    snippet: ({ loc, settings }) => (loc.settings.configurationSnippet === '' ? ''
      : `${I}# configuration-snippet\n${I}${atLocation(f.snippet(loc.settings.configurationSnippet, 'configuration-snippet'))}\n`)
      + (settings.locationSnippet === '' ? ''
        : `${I}# location-snippet (ConfigMap)\n${I}${indented(f.operatorSnippet(settings.locationSnippet, 'location-snippet', 'location'), I)}\n`),
  },
  server: {
    directives: ({ server, settings }) => (server.serverSnippet === '' ? ''
      : `\n        # server-snippet\n        ${f.snippet(server.serverSnippet, 'server-snippet')}\n`)
      + (settings.serverSnippet === '' ? ''
        : `\n        # server-snippet (ConfigMap)\n        ${indented(f.operatorSnippet(settings.serverSnippet, 'server-snippet', 'server'), '        ')}\n`),
    ownsHeaderFilter: ({ server, settings }) => SETS_HEADER_FILTER.test(server.serverSnippet) || SETS_HEADER_FILTER.test(settings.serverSnippet),
  },
};
