-- A dynamic route's denylist-source-range and allowlist-source-range (route-table fields `deny`,
-- `allow`; src/model/core/route-settings.ts), judged as NGINX's access module judges the location's
-- `deny …; allow …; deny all;`: on the client address after real_ip / PROXY protocol handling
-- ($binary_remote_addr), the first rule of the address's family that matches wins, an
-- IPv4-mapped IPv6 client is judged by the IPv4 rules, and a refused client gets 403.
local ffi = require("ffi")
local ngx = ngx
local ipairs, tonumber = ipairs, tonumber
local string_byte, string_sub = string.byte, string.sub
local bit = require("bit")
local band, lshift = bit.band, bit.lshift

ffi.cdef[[
int inet_pton(int af, const char *src, void *dst);
]]
local AF_INET, AF_INET6 = 2, 10
local buffer = ffi.new("unsigned char[16]")
local V4_MAPPED = "\0\0\0\0\0\0\0\0\0\0\255\255"

local _M = {}

--- A CIDR (or a bare address) as NGINX reads it: { family = 4|6, bytes (masked), bits }, or nil.
function _M.parse_cidr(text)
  local addr, bits = text:match("^([^/]+)/(%d+)$")
  if not addr then addr = text end
  local family, size = 4, 4
  if addr:find(":", 1, true) then family, size = 6, 16 end
  if ffi.C.inet_pton(family == 4 and AF_INET or AF_INET6, addr, buffer) ~= 1 then return nil end
  local max = size * 8
  bits = bits and tonumber(bits) or max
  if bits > max then return nil end
  local bytes = {}
  for i = 0, size - 1 do
    local keep = bits - i * 8
    local mask = keep >= 8 and 255 or keep <= 0 and 0 or band(lshift(255, 8 - keep), 255)
    bytes[i + 1] = band(buffer[i], mask)
  end
  return { family = family, bytes = bytes, bits = bits }
end

local function matches(rule, addr, offset)
  local bits = rule.bits
  local bytes = rule.bytes
  for i = 1, #bytes do
    local keep = bits - (i - 1) * 8
    if keep <= 0 then return true end
    local mask = keep >= 8 and 255 or band(lshift(255, 8 - keep), 255)
    if band(string_byte(addr, offset + i), mask) ~= bytes[i] then return false end
  end
  return true
end

--- At table compile time: the entry's rules per family, in NGINX's order (deny, allow, deny all),
--- once per table version; false when a CIDR does not parse (the shapes check refuses such a table).
function _M.compile(e)
  -- JSON null: absent.
  if type(e.deny) ~= "table" then e.deny = nil end
  if type(e.allow) ~= "table" then e.allow = nil end
  if e.deny == nil and e.allow == nil then return true end
  local rules = { [4] = {}, [6] = {} }
  for _, list in ipairs({ { e.deny, false }, { e.allow, true } }) do
    for _, text in ipairs(list[1] or {}) do
      local rule = _M.parse_cidr(text)
      if not rule then return false end
      rule.allow = list[2]
      local family = rules[rule.family]
      family[#family + 1] = rule
    end
  end
  -- `deny all` closes an allowlist for every family (and for clients on a unix socket).
  e.access = { rules = rules, closed = e.allow ~= nil and #e.allow > 0 }
  return true
end

local function allowed(rules, closed, addr, offset)
  for _, rule in ipairs(rules) do
    if matches(rule, addr, offset) then return rule.allow end
  end
  return not closed
end

--- Whether the route's lists let this request's client in (true when it has none).
function _M.allows(e)
  local access = e.access
  if access == nil then return true end
  local addr = ngx.var.binary_remote_addr
  local n = #addr
  local v4 = access.rules[4]
  if n == 4 then
    if #v4 == 0 and not access.closed then return true end
    return allowed(v4, access.closed, addr, 0)
  end
  if n == 16 then
    -- NGINX judges a mapped address by the IPv4 rules whenever there are any (`deny all` is one).
    if (#v4 > 0 or access.closed) and string_sub(addr, 1, 12) == V4_MAPPED then return allowed(v4, access.closed, addr, 12) end
    return allowed(access.rules[6], access.closed, addr, 0)
  end
  return not access.closed
end

--- In the router's rewrite phase, after the backend is chosen (the location's access phase comes
--- after its rewrite phase): 403 for a client the lists refuse.
function _M.check(e)
  if e.access ~= nil and not _M.allows(e) then return ngx.exit(ngx.HTTP_FORBIDDEN) end
end

return _M
