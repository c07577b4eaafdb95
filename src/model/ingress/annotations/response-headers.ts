// When the Lua router can set a location's response headers (enable-cors, custom-headers) as its
// more_set_headers would: lua/router.lua sets them in the header filter, which NGINX runs before
// the headers-more filter of the http level (ConfigMap add-headers), so a header both set would
// end with the ConfigMap's value instead of the location's.
import type { NginxSettings } from '../../core/config/settings.js';

/** Why the router cannot set these headers exactly, or null. */
export function responseHeadersPerRequest(key: string, names: readonly string[], s: NginxSettings): string | null {
  const global = new Set(Object.keys(s.addHeaders).map((n) => n.toLowerCase()));
  const both = names.find((n) => global.has(n.toLowerCase()));
  return both === undefined ? null : `${key} sets ${both}, which add-headers (ConfigMap) sets too`;
}
