// Who gets a TLS connection by its SNI name with --enable-ssl-passthrough, by the rule the server
// blocks and the Lua router follow for Host: a name some server has (its host, an alias, its www
// twin) before a wildcard, a wildcard host one label deep, a wildcard alias at any depth (as
// server_name has them). A passthrough wildcard gets only the names no server has, whichever
// namespace is older; everything else is NGINX's HTTPS. The stream server's map
// (src/render/blocks/sslpassthrough.ts) is this list.
import type { Server } from './types.js';
import { DEFAULT_SERVER } from './paths.js';
import { wwwRedirectNames } from './www-names.js';

export interface SniRoutes {
  /** Names matched exactly, and the passthrough server each goes to (null: NGINX's HTTPS servers). */
  readonly names: ReadonlyArray<{ readonly name: string; readonly server: Server | null }>;
  /** Passthrough wildcard names (`*.a.test`): the names below them (one label for a host, any depth for an alias) that `names` does not list. */
  readonly wildcards: ReadonlyArray<{ readonly name: string; readonly server: Server; readonly anyDepth: boolean }>;
  /** The routes as text: two configurations whose texts differ need a reload (the map is in nginx.conf). */
  readonly text: string;
}

const NONE: SniRoutes = { names: [], wildcards: [], text: '' };
const memo = new WeakMap<readonly Server[], SniRoutes>();
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1);

export function sniRoutes(servers: readonly Server[]): SniRoutes {
  let routes = memo.get(servers);
  if (routes) return routes;
  routes = NONE;
  if (servers.some((s) => s.sslPassthrough && s.hostname !== DEFAULT_SERVER)) {
    const names = new Map<string, Server | null>();
    const wildcards = new Map<string, { server: Server; anyDepth: boolean }>();
    for (const s of servers) {
      if (!s.sslPassthrough || s.hostname === DEFAULT_SERVER) continue;
      s.aliases.forEach((n) => (n.startsWith('*.') ? wildcards.set(n, { server: s, anyDepth: true }) : names.set(n, s)));
      if (s.hostname.startsWith('*.')) wildcards.set(s.hostname, { server: s, anyDepth: false });
      else names.set(s.hostname, s);
    }
    // Whether a passthrough wildcard covers a name.
    const covered = (n: string): boolean => {
      for (let dot = n.indexOf('.'); dot > 0; dot = n.indexOf('.', dot + 1)) {
        const w = wildcards.get(`*${n.slice(dot)}`);
        if (w && (w.anyDepth || dot === n.indexOf('.'))) return true;
      }
      return false;
    };
    if (wildcards.size > 0) {
      const www = wwwRedirectNames(servers);
      for (const s of servers) {
        if (s.sslPassthrough || s.hostname === DEFAULT_SERVER) continue;
        const other = www.get(s);
        for (const n of other === undefined ? [s.hostname, ...s.aliases] : [s.hostname, ...s.aliases, other]) {
          if (!n.startsWith('*.') && !names.has(n) && covered(n)) names.set(n, null);
        }
      }
    }
    const exact = [...names].map(([name, server]) => ({ name, server })).sort(byName);
    const wild = [...wildcards].map(([name, w]) => ({ name, ...w })).sort(byName);
    const text = [...exact.map((e) => `${e.name} ${e.server?.hostname ?? ''}`), ...wild.map((e) => `${e.name} ${e.server.hostname}${e.anyDepth ? ' *' : ''}`)].join('\n');
    routes = { names: exact, wildcards: wild, text };
  }
  memo.set(servers, routes);
  return routes;
}
