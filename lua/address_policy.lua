-- The upstream address policy inside NGINX, with the rules of src/model/checks/address-policy.ts: an
-- endpoint address (as posted, or as DNS answered for an ExternalName) is read in every spelling
-- inet_aton and inet_pton accept, the IPv4 addresses embedded in an IPv6 one are unwrapped, then
-- it is refused when it points back at this node (loopback, unspecified), at link-local services
-- or at a cloud's metadata service, unless the operator allowed that class. The model refuses
-- first; this is the second line, and the only one for names resolved at request time.
local tonumber, type, ipairs = tonumber, type, ipairs
local floor = math.floor
local concat = table.concat
local bxor = require("bit").bxor

local _M = {}

local allowed = {}   -- class → true
local own_ports = {} -- port → true: never on loopback or unspecified addresses
local own_addresses = {} -- the controller pod's own addresses (dotted IPv4, or IPv6 words joined by ":") → true
local has_own_addresses = false
-- The built-in default backend is NGINX's own default server on loopback: allowed for
-- upstream-default-backend (a name the model never gives a tenant's backend), and only there.
local DEFAULT_BACKEND = "upstream-default-backend"
local default_server_port = nil

--- policy: { allow = { "loopback", ... }, own_ports = { 8080, ... }, own_addresses = { "10.0.0.5", ... },
--- default_server_port = 8181 } (rendered into init_by_lua).
function _M.configure(policy)
  allowed, own_ports, default_server_port = {}, {}, nil
  own_addresses, has_own_addresses = {}, false
  if type(policy) ~= "table" then return end
  default_server_port = tonumber(policy.default_server_port)
  for _, class in ipairs(type(policy.allow) == "table" and policy.allow or {}) do allowed[class] = true end
  for _, port in ipairs(type(policy.own_ports) == "table" and policy.own_ports or {}) do
    local n = tonumber(port)
    if n then own_ports[n] = true end
  end
  for _, address in ipairs(type(policy.own_addresses) == "table" and policy.own_addresses or {}) do
    local parsed = _M.parse(address)
    if parsed then
      own_addresses[parsed.family == 4 and parsed.address or concat(parsed.words, ":")] = true
      has_own_addresses = true
    end
  end
end

local function split(s, sep)
  local parts, start = {}, 1
  while true do
    local at = s:find(sep, start, true)
    if not at then
      parts[#parts + 1] = s:sub(start)
      return parts
    end
    parts[#parts + 1] = s:sub(start, at - 1)
    start = at + #sep
  end
end

--- One IPv4 part as inet_aton reads it: 0x… hexadecimal, 0… octal, else decimal.
local function ipv4_part(p)
  if p:match("^0[xX]%x+$") then return #p <= 10 and tonumber(p:sub(3), 16) or nil end
  if p:match("^0[0-7]*$") then return #p <= 12 and tonumber(p, 8) or nil end
  if p:match("^[1-9]%d*$") then return #p <= 10 and tonumber(p) or nil end
  return nil
end

--- inet_aton's forms: a.b.c.d, a.b.c (c: 16 bits), a.b (b: 24 bits), a (32 bits) → 4 bytes.
local function parse_ipv4(s)
  local parts = split(s, ".")
  if #parts > 4 then return nil end
  local values = {}
  for i, p in ipairs(parts) do
    local v = ipv4_part(p)
    if not v then return nil end
    values[i] = v
  end
  local n = #values
  local last_bits = 8 * (5 - n)
  local last = values[n]
  for i = 1, n - 1 do
    if values[i] > 255 then return nil end
  end
  if last >= 2 ^ last_bits then return nil end
  local bytes = {}
  for i = 1, n - 1 do bytes[i] = values[i] end
  for shift = last_bits - 8, 0, -8 do
    bytes[#bytes + 1] = floor(last / 2 ^ shift) % 256
  end
  return bytes
end

--- Eight 16-bit words (an embedded dotted IPv4 allowed at the end), or nil.
local function parse_ipv6(s)
  if not s:match("^[%x:%.]+$") then return nil end
  local last_colon = s:match(".*():")
  if not last_colon then return nil end
  local text, tail = s, nil
  local v4 = s:sub(last_colon + 1)
  if v4:find(".", 1, true) then
    local a, b, c, d = v4:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$")
    if not a then return nil end
    for _, p in ipairs({ a, b, c, d }) do
      if #p > 3 or (#p > 1 and p:sub(1, 1) == "0") or tonumber(p) > 255 then return nil end
    end
    tail = { tonumber(a) * 256 + tonumber(b), tonumber(c) * 256 + tonumber(d) }
    text = s:sub(1, last_colon) .. "x"
  end
  local gap = text:find("::", 1, true)
  local head, rest = text, ""
  if gap then
    if text:find("::", gap + 1, true) then return nil end
    head, rest = text:sub(1, gap - 1), text:sub(gap + 2)
  end
  local words = {}
  local function read(part)
    if part == "" then return true end
    for _, g in ipairs(split(part, ":")) do
      if g == "x" then
        words[#words + 1] = tail[1]
        words[#words + 1] = tail[2]
      elseif g:match("^%x%x?%x?%x?$") then
        words[#words + 1] = tonumber(g, 16)
      else
        return false
      end
    end
    return true
  end
  if not read(head) then return nil end
  local before = #words
  if not read(rest) then return nil end
  if gap then
    local missing = 8 - #words
    if missing < 1 then return nil end
    for i = #words, before + 1, -1 do words[i + missing] = words[i] end
    for i = before + 1, before + missing do words[i] = 0 end
  end
  if #words ~= 8 then return nil end
  return words
end

-- Cloud metadata and platform services (the model's list, src/model/checks/address-policy.ts, where
-- each is named; docs/security.md gives the sources): the class "metadata", even inside link-local.
local function ipv4_number(b)
  return ((b[1] * 256 + b[2]) * 256 + b[3]) * 256 + b[4]
end
-- Keyed by the address as a number: judging an endpoint allocates no string.
local METADATA_IPV4 = {}
for _, b in ipairs({ { 169, 254, 169, 254 }, { 169, 254, 170, 2 }, { 169, 254, 0, 23 }, { 100, 100, 100, 200 }, { 168, 63, 129, 16 }, { 192, 0, 0, 192 } }) do
  METADATA_IPV4[ipv4_number(b)] = true
end
local METADATA_IPV6 = {} -- concat(words, ":") → true, filled below from the addresses' spellings

local function ipv4_class(b)
  if METADATA_IPV4[ipv4_number(b)] then return "metadata" end
  if b[1] == 127 then return "loopback" end
  if b[1] == 0 then return "unspecified" end
  if b[1] == 169 and b[2] == 254 then return "link-local" end
  return nil
end

-- RFC 6052's IPv4 inside an IPv6 prefix of `bits` (48..96), from the 16 bytes `b` (1-based): four
-- bytes from the prefix's end, the u byte (index 9) skipped; nil unless u and the suffix are zero.
local function rfc6052_ipv4(b, bits)
  local out, i = {}, bits / 8 + 1
  while #out < 4 do
    if i ~= 9 then out[#out + 1] = b[i] end
    i = i + 1
  end
  if bits < 64 and b[9] ~= 0 then return nil end
  for k = i, 16 do
    if b[k] ~= 0 then return nil end
  end
  return out
end

-- Every IPv4 address an IPv6 address carries where it is dialled: mapped, translated, compatible;
-- NAT64 (64:ff9b::/96; 64:ff9b:1::/48 at each RFC 6052 length, 0.0.0.0/8 being no destination);
-- 6to4 (2002::/16); Teredo (2001::/32: the server, and the client with its bits inverted).
local function embedded_ipv4(w)
  local function zero(from, to)
    for i = from, to do
      if w[i] ~= 0 then return false end
    end
    return true
  end
  local b = {}
  for i = 1, 8 do
    b[2 * i - 1], b[2 * i] = floor(w[i] / 256), w[i] % 256
  end
  local tail = { b[13], b[14], b[15], b[16] }
  if (zero(1, 5) and w[6] == 0xffff) or (zero(1, 4) and w[5] == 0xffff and w[6] == 0) or zero(1, 6) then return { tail } end
  if w[1] == 0x64 and w[2] == 0xff9b then
    if zero(3, 6) then return { tail } end
    if w[3] == 1 then
      local out = {}
      for _, bits in ipairs({ 48, 56, 64, 96 }) do
        local v4 = rfc6052_ipv4(b, bits)
        if v4 and v4[1] ~= 0 then out[#out + 1] = v4 end
      end
      return out
    end
  end
  if w[1] == 0x2002 then return { { b[3], b[4], b[5], b[6] } } end
  if w[1] == 0x2001 and w[2] == 0 then
    return { { b[5], b[6], b[7], b[8] }, { bxor(b[13], 0xff), bxor(b[14], 0xff), bxor(b[15], 0xff), bxor(b[16], 0xff) } }
  end
  return {}
end

-- When an address carries several IPv4 addresses, the class least often allowed decides.
local CLASS_ORDER = { "metadata", "unspecified", "link-local", "loopback" }

local function ipv6_class(w)
  if METADATA_IPV6[concat(w, ":")] then return "metadata" end
  local loopback = w[8] == 1
  for i = 1, 7 do
    if w[i] ~= 0 then loopback = false end
  end
  if loopback then return "loopback" end
  if w[1] >= 0xfe80 and w[1] <= 0xfebf then return "link-local" end
  local found = {}
  for _, v4 in ipairs(embedded_ipv4(w)) do
    local class = ipv4_class(v4)
    if class then found[class] = true end
  end
  for _, class in ipairs(CLASS_ORDER) do
    if found[class] then return class end
  end
  return nil
end

for _, spelling in ipairs({ "fd00:ec2::254", "fe80::a9fe:a9fe" }) do
  METADATA_IPV6[concat(parse_ipv6(spelling), ":")] = true
end

--- An IP address in any spelling → { family, address (what NGINX is given), class }; nil if
--- it is not one. IPv4 is given as dotted decimal: NGINX reads "0177.0.0.1" as 177.0.0.1 where a
--- resolver reads 127.0.0.1, and the policy must judge what NGINX dials.
function _M.parse(address)
  if type(address) ~= "string" then return nil end
  local s = address
  if s:sub(1, 1) == "[" and s:sub(-1) == "]" then s = s:sub(2, -2) end
  if not s:find(":", 1, true) then
    if s:sub(-1) == "." then s = s:sub(1, -2) end
    local b = parse_ipv4(s)
    if not b then return nil end
    return { family = 4, address = b[1] .. "." .. b[2] .. "." .. b[3] .. "." .. b[4], class = ipv4_class(b) }
  end
  local bare, zone = s, ""
  local percent = s:find("%", 1, true)
  if percent then
    bare, zone = s:sub(1, percent - 1), s:sub(percent)
    if not zone:match("^%%[%w_.%-]+$") or #zone > 65 then return nil end
  end
  local w = parse_ipv6(bare)
  if not w then return nil end
  return { family = 6, address = bare .. zone, class = ipv6_class(w), words = w }
end

-- Whether `parsed` is, or carries where it is dialled, one of the controller pod's own addresses.
local function is_own_address(parsed)
  if parsed.family == 4 then return own_addresses[parsed.address] == true end
  if own_addresses[concat(parsed.words, ":")] then return true end
  for _, b in ipairs(embedded_ipv4(parsed.words)) do
    if own_addresses[b[1] .. "." .. b[2] .. "." .. b[3] .. "." .. b[4]] then return true end
  end
  return false
end

--- `localhost`, `localhost.` and names under it (RFC 6761): loopback by definition.
function _M.is_localhost_name(name)
  if type(name) ~= "string" then return false end
  local n = name:lower():gsub("%.$", "")
  return n == "localhost" or n:sub(-10) == ".localhost"
end

--- Why `parsed` (from parse()) may not be dialled on `port` for backend `backend_name`, or nil
--- when it may.
function _M.refusal(parsed, port, backend_name)
  local class = parsed.class
  if backend_name == DEFAULT_BACKEND and parsed.address == "127.0.0.1"
     and default_server_port and tonumber(port) == default_server_port then
    return nil
  end
  if has_own_addresses and own_ports[tonumber(port)] and is_own_address(parsed) then
    return "one of the controller's own ports on its pod's own address"
  end
  if not class then return nil end
  if not allowed[class] then return "a " .. class .. " address" end
  if (class == "loopback" or class == "unspecified") and own_ports[tonumber(port)] then
    return "one of the controller's own ports"
  end
  return nil
end

return _M
