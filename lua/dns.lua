-- A small A-record resolver for ExternalName backends and the hosts annotations name (mirror,
-- auth) (Debian packages no resty.dns): one UDP query per name (and per search domain, as
-- resolv.conf asks) to the nameservers of configuration.resolvers or /etc/resolv.conf, answers
-- cached per worker for their TTL. Needs cosockets: timers and the rewrite, access and content
-- phases.
local ngx = ngx
local bit = require("bit")
local band, rshift = bit.band, bit.rshift
local byte, char = string.byte, string.char

local MIN_TTL, MAX_TTL = 1, 300
local RETRY_AFTER_FAILURE = 5 -- seconds before a failed name is asked again
local TIMEOUT_MS = 2000

local _M = {}

local cache = {} -- name → { addresses = {...}, expires = <ngx.now()> }
local query_id = 0

--- "host", "host:port" or "[v6]:port".
local function parse_nameserver(entry)
  local host, port = entry:match("^%[(.+)%]:(%d+)$")
  if not host and select(2, entry:gsub(":", "")) == 1 then
    host, port = entry:match("^(.+):(%d+)$")
  end
  if host then return { host, tonumber(port) } end
  return { entry, 53 }
end

--- Nameservers: configuration.resolvers (set in init_by_lua), else /etc/resolv.conf.
function _M.nameservers()
  local configured = package.loaded.configuration and package.loaded.configuration.resolvers
  local list = {}
  if type(configured) == "table" and #configured > 0 then
    for _, entry in ipairs(configured) do list[#list + 1] = parse_nameserver(entry) end
    return list
  end
  local file = io.open("/etc/resolv.conf", "r")
  if not file then return list end
  for line in file:lines() do
    local address = line:match("^%s*nameserver%s+([^%s]+)")
    if address then list[#list + 1] = { address, 53 } end
  end
  file:close()
  return list
end

local function encode_query(id, name)
  local parts = { char(rshift(id, 8), band(id, 0xff)), "\1\0", "\0\1", "\0\0\0\0\0\0" }
  for label in name:gmatch("[^.]+") do
    parts[#parts + 1] = char(#label) .. label
  end
  parts[#parts + 1] = "\0\0\1\0\1" -- root, QTYPE A, QCLASS IN
  return table.concat(parts)
end

local function u16(data, pos) return byte(data, pos) * 256 + byte(data, pos + 1) end
local function u32(data, pos) return u16(data, pos) * 65536 + u16(data, pos + 2) end

--- Position after a (possibly compressed) name starting at `pos`.
local function skip_name(data, pos)
  while true do
    local len = byte(data, pos)
    if not len then return nil end
    if len == 0 then return pos + 1 end
    if band(len, 0xc0) == 0xc0 then return pos + 2 end
    pos = pos + len + 1
  end
end

local function decode_answer(data, id)
  if #data < 12 or u16(data, 1) ~= id then return nil, "mismatched DNS answer" end
  local rcode = band(byte(data, 4), 0x0f)
  if rcode ~= 0 then return nil, "DNS rcode " .. rcode end
  local questions, answers = u16(data, 5), u16(data, 7)
  local pos = 13
  for _ = 1, questions do
    pos = skip_name(data, pos)
    if not pos then return nil, "truncated DNS answer" end
    pos = pos + 4
  end
  local addresses, ttl = {}, MAX_TTL
  for _ = 1, answers do
    pos = skip_name(data, pos)
    if not pos or pos + 10 > #data + 1 then return nil, "truncated DNS answer" end
    local rtype, rttl, rdlength = u16(data, pos), u32(data, pos + 4), u16(data, pos + 8)
    pos = pos + 10
    if rtype == 1 and rdlength == 4 then
      addresses[#addresses + 1] = table.concat({ byte(data, pos, pos + 3) }, ".")
      ttl = math.min(ttl, rttl)
    end
    pos = pos + rdlength
  end
  if #addresses == 0 then return nil, "no A records" end
  return addresses, math.max(MIN_TTL, ttl)
end

local function query(name)
  local servers = _M.nameservers()
  if #servers == 0 then return nil, "no nameservers configured" end
  local last_err
  for _, server in ipairs(servers) do
    query_id = (query_id + 1) % 65536
    -- This query's own id: another coroutine of the worker may ask (and move query_id) while
    -- this one waits for its answer.
    local id = query_id
    local sock = ngx.socket.udp()
    sock:settimeout(TIMEOUT_MS)
    local ok, err = sock:setpeername(server[1], server[2])
    if ok then ok, err = sock:send(encode_query(id, name)) end
    if ok then
      local data
      data, err = sock:receive()
      if data then
        local addresses, ttl = decode_answer(data, id)
        sock:close()
        if addresses then return addresses, ttl end
        err = ttl
      end
    end
    sock:close()
    last_err = server[1] .. ":" .. server[2] .. ": " .. tostring(err)
  end
  return nil, last_err
end

--- The names asked for `name`, as the C library and ingress-nginx's resolver order them: a name
--- with a trailing dot as it is; otherwise, with fewer dots than ndots, each search domain
--- appended first and the name last, else the name first (configuration.dns_search/dns_ndots,
--- from the controller's resolv.conf).
local function candidates(name)
  local conf = package.loaded.configuration
  local search = conf and type(conf.dns_search) == "table" and conf.dns_search or {}
  if #search == 0 or name:sub(-1) == "." then return { name } end
  local _, dots = name:gsub("%.", "")
  local list = {}
  local first = dots >= (conf.dns_ndots or 1)
  if first then list[1] = name end
  for _, domain in ipairs(search) do list[#list + 1] = name .. "." .. domain end
  if not first then list[#list + 1] = name end
  return list
end

--- Addresses of `name`; a failed lookup keeps the last known addresses (if any) for a while.
function _M.lookup(name)
  local now = ngx.now()
  local entry = cache[name]
  if entry and entry.expires > now then return entry.addresses end
  local addresses, ttl_or_err
  local errors = {}
  for _, candidate in ipairs(candidates(name)) do
    addresses, ttl_or_err = query(candidate)
    if addresses then break end
    errors[#errors + 1] = candidate .. ": " .. tostring(ttl_or_err)
  end
  if addresses then
    cache[name] = { addresses = addresses, expires = now + ttl_or_err }
    return addresses
  end
  ngx.log(ngx.ERR, "cannot resolve ", name, ": ", table.concat(errors, "; "))
  local stale = entry and entry.addresses or {}
  cache[name] = { addresses = stale, expires = now + RETRY_AFTER_FAILURE }
  return stale
end

--- True when `name` has no answer cached or its TTL has run out.
function _M.expired(name)
  local entry = cache[name]
  return not entry or entry.expires <= ngx.now()
end

return _M
