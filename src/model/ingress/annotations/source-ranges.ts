// When the Lua router can apply a location's source-range list (allowlist-source-range,
// denylist-source-range) as the location's allow/deny would: lua/route_access.lua reads every
// address NGINX's allow/deny take, but not a zone index, and tries at most so many per request.

/** The most networks per list a route carries (lua/configuration_shapes.lua MAX_ROUTE_SOURCE_RANGES). */
export const MAX_ROUTE_SOURCE_RANGES = 5000;

/** Why the router cannot apply the list, or null. */
export function sourceRangesPerRequest(key: string, list: readonly string[]): string | null {
  if (list.length > MAX_ROUTE_SOURCE_RANGES) return `${key} has more than ${MAX_ROUTE_SOURCE_RANGES} networks (NGINX's allow/deny take them)`;
  const zoned = list.find((c) => c.includes('%'));
  return zoned === undefined ? null : `${key} ${zoned.slice(0, 100)}: a zone index is NGINX's to read`;
}
