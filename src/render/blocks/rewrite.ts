// rewrite group: app-root's redirect of `/`, the rewrite of the matched path to rewrite-target,
// X-Forwarded-Prefix, and the SSL-redirect settings the Lua rewrite phase applies.
import type { Location } from '../../model/types.js';
import * as f from '../filters.js';
import { I, directives, escapeRegex } from './layout.js';
import type { RenderBlock } from './types.js';

/** The SSL redirect of the location as words for lua/lua_ingress.lua (`force` adds force-ssl-redirect); none: no redirect. */
export function sslRedirectFlags(loc: Location, force = false): string[] {
  const rw = loc.rewrite;
  const flags: string[] = [];
  if (force || f.luaBool(rw.forceSSLRedirect, 'force-ssl-redirect') === 'true') flags.push('force-ssl-redirect');
  if (f.luaBool(rw.sslRedirect, 'ssl-redirect') === 'true') flags.push('ssl-redirect');
  if (flags.length > 0 && f.luaBool(rw.preserveTrailingSlash, 'preserve-trailing-slash') === 'true') flags.push('preserve-trailing-slash');
  return flags;
}

export const rewriteBlock: RenderBlock = {
  group: 'rewrite',
  applied: 'directives',
  location: {
    redirect: ({ loc }) => (loc.rewrite.appRoot === '' ? ''
      : `${I}if ($uri = /) {\n${I}    return 302 ${f.appRoot(loc.rewrite.appRoot, 'app-root')};\n${I}}\n`),
    lua({ loc }) {
      const flags = sslRedirectFlags(loc);
      return flags.length > 0 ? { redirect: flags } : null;
    },
    errors({ server, loc }) {
      if (loc.rewrite.target === '') return '';
      const re = f.regex(server.useRegex ? `(?i)${loc.path}` : `(?i)^${escapeRegex(loc.path)}`, 'path');
      return directives([`rewrite ${re} ${f.rewriteTarget(loc.rewrite.target, 'rewrite-target')} break`]);
    },
    headers: ({ loc, hdr }) => (loc.rewrite.xForwardedPrefix === '' ? null
      : { lines: [`${hdr} X-Forwarded-Prefix ${f.quote(loc.rewrite.xForwardedPrefix, 'x-forwarded-prefix')}`] }),
  },
};
