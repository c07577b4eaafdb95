// What the per-location adjustments of the groups share: whether a location's path lies under one
// of a list of paths (no-tls-redirect-locations, no-auth-locations).

/** Whether `path` is one of `list` or below one: `/p` covers `/p/x`, not `/px`. */
export function pathUnderAny(path: string, list: readonly string[]): boolean {
  for (const p of list) {
    if (path.startsWith(p) && (path.length === p.length || p.endsWith('/') || path.charCodeAt(p.length) === 0x2f)) return true;
  }
  return false;
}
