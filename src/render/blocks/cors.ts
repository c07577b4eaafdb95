// cors group: CORS as ingress-nginx sets it. A request whose Origin is allowed (any request with
// `*`) gets the whole Access-Control-* set; its preflight (OPTIONS) is answered 204 here. Other
// origins get no CORS header and their OPTIONS goes to the backend.
import { corsHeaders, corsOriginPattern, type CorsConfig } from '../../model/ingress/annotations/cors.js';
import * as f from '../filters.js';
import { RenderError } from '../filters.js';
import { I } from './layout.js';
import type { RenderBlock } from './types.js';

function originRegex(origins: readonly string[]): string | null {
  const pattern = corsOriginPattern(origins);
  if (pattern === null) return null;
  // Any scheme, as ingress-nginx allows (`file://x`); the parser gave scheme://host[:port].
  for (const o of origins) {
    if (!/^[a-z][a-z0-9+.-]{0,15}:\/\/[A-Za-z0-9.*:-]+\/?$/.test(o)) throw new RenderError('cors-allow-origin', `not scheme://host[:port]: ${JSON.stringify(o.slice(0, 100))}`);
  }
  return f.regex(pattern, 'cors-allow-origin');
}

function corsText(cors: CorsConfig): string {
  const regex = originRegex(cors.allowOrigin);
  const origin = regex
    ? `${I}set $cors "";\n${I}set $cors_allow_origin "";\n${I}if ($http_origin ~* ${regex}) {\n${I}    set $cors "true";\n${I}    set $cors_allow_origin $http_origin;\n${I}}\n`
    : `${I}set $cors "true";\n${I}set $cors_allow_origin "*";\n`;
  const headers = [
    '"Access-Control-Allow-Origin: $cors_allow_origin"',
    ...corsHeaders(cors).map(([name, value]) => f.moreHeader(name, value)),
  ].map((h) => `${I}    more_set_headers ${h};\n`).join('');
  return `${origin}${I}if ($request_method = OPTIONS) {\n${I}    set $cors "\${cors}options";\n${I}}\n`
    + `${I}if ($cors = "true") {\n${headers}${I}}\n`
    + `${I}if ($cors = "trueoptions") {\n${headers}`
    + `${I}    more_set_headers "Content-Type: text/plain; charset=utf-8";\n`
    + `${I}    more_set_headers "Content-Length: 0";\n`
    + `${I}    return 204;\n${I}}\n`;
}

/** Made once per CORS setting: the locations of an Ingress share its parsed annotations, so its CORS object too. */
const made = new WeakMap<CorsConfig, string>();

export const corsBlock: RenderBlock = {
  group: 'cors',
  applied: 'directives',
  location: {
    cors({ loc }) {
      if (!loc.settings.cors) return '';
      let text = made.get(loc.settings.cors);
      if (text === undefined) made.set(loc.settings.cors, (text = corsText(loc.settings.cors)));
      return text;
    },
  },
};
