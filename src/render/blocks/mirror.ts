// mirror group: `mirror` in each location of the Ingress to an internal location per Ingress,
// whose Lua content handler (lua/mirror.lua) hands a copy of the request to a timer and answers
// at once, so the client never waits for the mirror. A copy that carries the body needs it in a
// file NGINX keeps until the request ends (client_body_in_file_only clean): the copy is sent
// after the request may have ended, and NGINX's temporary files have no name by then.
import { createHash } from 'node:crypto';
import { MIRROR_HOST_VARIABLE, type MirrorConfig } from '../../model/ingress/annotations/mirror.js';
import { upstreamVhostVariable } from '../../model/ingress/annotations/upstreamvhost.js';
import type { NginxSettings } from '../../model/core/config/settings.js';
import * as f from '../filters.js';
import { I, NONE, directives } from './layout.js';
import { modsecurityOff } from './modsecurity.js';
import type { LocationContext, RenderBlock, Shared } from './types.js';

/**
 * The internal location of one Ingress's copies. Its name holds a space, which no Ingress path
 * may (src/model/core/paths.ts): a tenant cannot declare the same location and so make nginx -t fail.
 */
function mirrorLocationName(c: LocationContext): string {
  const ing = c.loc.ingress;
  const id = createHash('sha1').update(`mirror\u0000${ing?.namespace ?? ''}\u0000${ing?.name ?? ''}`).digest('hex').slice(0, 12);
  return `/_mirror ${id}`;
}

/** The quoted name: a fixed word and hex digits, so quoting alone suffices (f.path refuses the space on purpose). */
const quotedName = (name: string): string => {
  if (!/^\/_mirror [0-9a-f]{12}$/.test(name)) throw new f.RenderError('mirror-target', 'not a mirror location name');
  return f.quoteLiteral(name, 'mirror-target');
};

const ms = (seconds: number, field: string): string => f.num(seconds * 1000, field);

function mirrorLocation(m: MirrorConfig, name: string, s: NginxSettings): string {
  const host = m.host === MIRROR_HOST_VARIABLE ? 'nil' : f.luaString(m.host, 'mirror-target');
  // A Host made of variables is evaluated by NGINX for the request (`set`), then checked by mirror.lua.
  const template = m.hostHeader !== MIRROR_HOST_VARIABLE && m.hostHeader.includes('$');
  const hostHeader = m.hostHeader === MIRROR_HOST_VARIABLE ? 'nil' : template ? 'ngx.var.mirror_host' : f.luaString(m.hostHeader, 'mirror-host');
  if (m.scheme !== 'http' && m.scheme !== 'https') throw new f.RenderError('mirror-target', 'not an http(s) URL');
  const spec = `{ scheme = ${f.luaString(m.scheme)}, host = ${host}, port = ${f.num(m.port, 'mirror-target')}, host_header = ${hostHeader}, `
    + `body = ${f.luaBool(m.requestBody, 'mirror-request-body')}, connect_timeout = ${ms(s.proxyConnectTimeout, 'proxy-connect-timeout')}, `
    + `send_timeout = ${ms(s.proxySendTimeout, 'proxy-send-timeout')}, read_timeout = ${ms(s.proxyReadTimeout, 'proxy-read-timeout')} }`;
  // Copies are not requests of their own: not logged, not counted in the request metrics.
  return `\n        location = ${quotedName(name)} {\n${directives(['internal', 'access_log off', ...modsecurityOff(s), `set $mirror_uri ${f.quoteWithVariables(m.uri, 'mirror-target')}`,
    ...(template ? [`set $mirror_host ${f.quoteWithVariables(m.hostHeader, 'mirror-host', {}, upstreamVhostVariable)}`] : [])])}`
    + `${I}content_by_lua_block {\n${I}    require("mirror").send(${spec})\n${I}}\n        }\n`;
}

export const mirrorBlock: RenderBlock = {
  group: 'mirror',
  applied: 'directives',
  location: {
    proxy: (c) => {
      const m = c.loc.settings.mirror;
      if (!m) return '';
      return directives([
        `mirror ${quotedName(mirrorLocationName(c))}`,
        `mirror_request_body ${m.requestBody ? 'on' : 'off'}`,
        ...(m.requestBody ? ['client_body_in_file_only clean'] : []),
      ]);
    },
    internal: (c): readonly Shared[] => {
      const m = c.loc.settings.mirror;
      if (!m) return NONE;
      const name = mirrorLocationName(c);
      return [{ name, text: () => mirrorLocation(m, name, c.settings) }];
    },
  },
};
