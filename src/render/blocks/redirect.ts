// redirect group: permanent/temporal-redirect as a `return` in the location, relative-redirects
// (absolute_redirect; http level: the ConfigMap's), and from-to-www-redirect as a server of the
// other name that redirects to this one.
import type { Location } from '../../model/core/types.js';
import * as f from '../filters.js';
import { escapedValue } from '../header-values.js';
import { directives } from './layout.js';
import type { RenderBlock, ServerContext } from './types.js';

/** The from-to-www redirect server, printed after the server it redirects to. */
function wwwRedirectServer({ server, settings, listen, wwwRedirectFrom }: ServerContext): string {
  if (!wwwRedirectFrom) return '';
  const from = f.host(wwwRedirectFrom, 'from-to-www-redirect');
  const listenLines = listen.map((l) => `        listen ${l.replace(' default_server', '').replace(' reuseport', '')};\n`).join('');
  // As ingress-nginx: the port is always named and one trailing slash dropped (lua_ingress.lua).
  return `\n    ## start server ${from}\n    server {\n        server_name ${from};\n${listenLines}`
    + `        set_by_lua_block $redirect_to {\n            return lua_ingress.www_redirect_target(${f.luaString(f.host(server.hostname), 'host')})\n        }\n`
    + `        return ${f.num(settings.httpRedirectCode, 'http-redirect-code')} $redirect_to;\n    }\n    ## end server ${from}\n`;
}

/** The location's `return`; a URL with a variable a client fills is escaped first (../header-values.ts). */
function redirectReturn(r: NonNullable<Location['settings']['redirect']>): string {
  const { setup, value } = escapedValue(f.redirectTarget(r.url, 'permanent-redirect'), 'redirect_target', 'header');
  return setup + directives([`return ${f.num(r.code, 'redirect code')} ${value}`]);
}

export const redirectBlock: RenderBlock = {
  group: 'redirect',
  applied: 'directives',
  location: {
    redirect: ({ loc, settings }) => (loc.settings.relativeRedirects === settings.relativeRedirects ? ''
      : directives([`absolute_redirect ${f.onoff(!loc.settings.relativeRedirects, 'relative-redirects')}`]))
      + (loc.settings.redirect ? redirectReturn(loc.settings.redirect) : ''),
  },
  server: { after: wwwRedirectServer },
};
