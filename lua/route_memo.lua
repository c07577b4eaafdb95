-- The router's memo of path matches (lua/router.lua), per worker and per route table: request
-- host → URI → the route NGINX's location rules chose (false: none). Matching walks a host's
-- prefix lengths and regular expressions, loops LuaJIT cannot compile into the request's trace,
-- so a request that matched before costs two table lookups instead. Bounded: URIs longer than
-- MAX_URI_BYTES are not kept, and a client sending endless distinct URIs empties the memo when it
-- reaches MAX_ENTRIES; it never grows past them.
local pairs, setmetatable = pairs, setmetatable

local _M = { MAX_ENTRIES = 10000, MAX_URI_BYTES = 256 }

local memo = {}
memo.__index = memo

--- An empty memo; the bounds default to MAX_ENTRIES and MAX_URI_BYTES.
function _M.new(max_entries, max_uri_bytes)
  return setmetatable({
    hosts = {}, count = 0, table = nil,
    max_entries = max_entries or _M.MAX_ENTRIES, max_uri_bytes = max_uri_bytes or _M.MAX_URI_BYTES,
  }, memo)
end

--- The route kept for host and URI under route table `t` (false: no route), or nil when none is
--- kept; a table other than the memo's empties it first.
function memo:get(t, host, uri)
  if t ~= self.table then
    self.hosts, self.count, self.table = {}, 0, t
    return nil
  end
  local uris = self.hosts[host]
  if uris then return uris[uri] end
  return nil
end

--- Keeps `route` (an entry of the table last given to get, or false) for host and URI.
function memo:put(host, uri, route)
  if #uri > self.max_uri_bytes then return end
  local uris = self.hosts[host]
  if uris and uris[uri] ~= nil then
    uris[uri] = route
    return
  end
  if self.count >= self.max_entries then
    self.hosts, self.count = {}, 0
    uris = nil
  end
  if not uris then
    uris = {}
    self.hosts[host] = uris
  end
  self.count = self.count + 1
  uris[uri] = route
end

--- Forgets the matches kept for request host `host` (its routes changed).
function memo:drop(host)
  local uris = self.hosts[host]
  if not uris then return end
  local n = 0
  for _ in pairs(uris) do n = n + 1 end
  self.hosts[host] = nil
  self.count = self.count - n
end

--- How many matches are kept.
function memo:size()
  return self.count
end

return _M
