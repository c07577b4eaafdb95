// rewrite group: app-root's redirect of `/`, the rewrite of the matched path to rewrite-target,
// X-Forwarded-Prefix, the SSL-redirect settings the Lua rewrite phase applies, and whether
// redirects NGINX issues name the port (http level: use-port-in-redirects of the ConfigMap).
import type { Location } from '../../model/core/types.js';
import * as f from '../filters.js';
import { rewriteRegex } from '../../model/core/route-uri.js';
import { I, directives } from './layout.js';
import type { RenderBlock } from './types.js';

/** The SSL redirect of the location as words for lua/lua_ingress.lua (`force` adds force-ssl-redirect); none: no redirect. */
export function sslRedirectFlags(loc: Location, force = false): string[] {
  const rw = loc.settings.rewrite;
  const flags: string[] = [];
  if (force || f.luaBool(rw.forceSSLRedirect, 'force-ssl-redirect') === 'true') flags.push('force-ssl-redirect');
  if (f.luaBool(rw.sslRedirect, 'ssl-redirect') === 'true') flags.push('ssl-redirect');
  if (flags.length > 0 && f.luaBool(rw.preserveTrailingSlash, 'preserve-trailing-slash') === 'true') flags.push('preserve-trailing-slash');
  if (flags.length > 0 && f.luaBool(rw.usePortInRedirects, 'use-port-in-redirects') === 'true') flags.push('use-port-in-redirects');
  return flags;
}

export const rewriteBlock: RenderBlock = {
  group: 'rewrite',
  applied: 'directives',
  location: {
    redirect: ({ loc, settings }) => (loc.settings.rewrite.usePortInRedirects === settings.usePortInRedirects ? ''
      : directives([`port_in_redirect ${f.onoff(loc.settings.rewrite.usePortInRedirects, 'use-port-in-redirects')}`]))
      + (loc.settings.rewrite.appRoot === '' ? ''
        : `${I}if ($uri = /) {\n${I}    return 302 ${f.appRoot(loc.settings.rewrite.appRoot, 'app-root')};\n${I}}\n`),
    lua({ loc }) {
      const flags = sslRedirectFlags(loc);
      return flags.length > 0 ? { redirect: flags } : null;
    },
    // The server is read only where the location has a target: the other locations share their settings' text (../location.ts).
    errors(c) {
      const loc = c.loc;
      if (loc.settings.rewrite.target === '') return '';
      const re = f.regex(rewriteRegex(c.server.useRegex, loc.path), 'path');
      return directives([`rewrite ${re} ${f.rewriteTarget(loc.settings.rewrite.target, 'rewrite-target')} break`]);
    },
    headers: ({ loc, hdr }) => (loc.settings.rewrite.xForwardedPrefix === '' ? null
      : { lines: [`${hdr} X-Forwarded-Prefix ${f.quoteWithVariables(loc.settings.rewrite.xForwardedPrefix, 'x-forwarded-prefix')}`] }),
  },
};
