-- OCSP stapling (ConfigMap enable-ocsp). The certificate callback staples the response cached
-- for the certificate; when there is none, or it is due for renewal, a timer asks the
-- certificate's OCSP responder (the URL in its AIA extension, plain http) for a new one,
-- validates it against the chain (a response that is not "good" is not stapled, as NGINX's own
-- stapling does) and caches it in a shared dict, so a handshake never waits for the responder.
-- A certificate names its responder, so the responder's address is tenant input: it is judged
-- by the upstream address policy (lua/address_policy.lua) before it is dialled.
local ocsp = require("ngx.ocsp")
local address_policy = require("address_policy")
local dns = require("dns")
local ngx = ngx
local tonumber = tonumber

local cache = ngx.shared.ocsp_response_cache

local REFRESH = 3600            -- seconds a response is used before a new one is asked for
local MAX_AGE = 3 * 24 * 3600   -- a response fetched longer ago is no longer stapled
local RETRY = 60                -- seconds between two attempts for one certificate (all workers)
local MAX_RESPONSE = 64 * 1024
local TIMEOUT_MS = 2000

local _M = { enabled = false }

--- opts: { enabled = true|false } (rendered into init_by_lua).
function _M.configure(opts)
  _M.enabled = type(opts) == "table" and opts.enabled == true
  return _M
end

--- http://host[:port][/path] → host, port, path (host without brackets); nil for anything else.
local function parse_url(url)
  local host, port, path = url:match("^[Hh][Tt][Tt][Pp]://%[([%x:.]+)%]:?(%d*)(.*)$")
  if not host then host, port, path = url:match("^[Hh][Tt][Tt][Pp]://([%w.-]+):?(%d*)(.*)$") end
  if not host or (path ~= "" and path:sub(1, 1) ~= "/") then return nil end
  port = port == "" and 80 or tonumber(port)
  if not port or port < 1 or port > 65535 then return nil end
  return host, port, path == "" and "/" or path
end

--- The address to dial for `host`, or nil and why not.
local function responder_address(host, port)
  local parsed = address_policy.parse(host)
  if not parsed and address_policy.is_localhost_name(host) then parsed = address_policy.parse("127.0.0.1") end
  if not parsed then
    local addresses = dns.lookup(host)
    if #addresses == 0 then return nil, "cannot resolve " .. host end
    parsed = address_policy.parse(addresses[1])
    if not parsed then return nil, "unusable address for " .. host end
  end
  local refusal = address_policy.refusal(parsed, port, nil)
  if refusal then return nil, "refused: " .. refusal end
  return parsed.family == 6 and "[" .. parsed.address .. "]" or parsed.address
end

local function read_response(sock)
  local line, err = sock:receive("*l")
  if not line then return nil, "no status line: " .. tostring(err) end
  local status = tonumber(line:match("^HTTP/%d%.%d (%d%d%d)"))
  if status ~= 200 then return nil, "status " .. tostring(status or line:sub(1, 40)) end
  local length
  for _ = 1, 100 do
    line, err = sock:receive("*l")
    if not line then return nil, "headers: " .. tostring(err) end
    if line == "" then break end
    local n = line:match("^[Cc][Oo][Nn][Tt][Ee][Nn][Tt]%-[Ll][Ee][Nn][Gg][Tt][Hh]:%s*(%d+)%s*$")
    if n then length = tonumber(n) end
  end
  if length then
    if length > MAX_RESPONSE then return nil, "response of " .. length .. " bytes" end
    return sock:receive(length)
  end
  local parts, size = {}, 0
  while true do
    local data
    data, err = sock:receiveany(MAX_RESPONSE)
    if not data then break end
    size = size + #data
    if size > MAX_RESPONSE then return nil, "response larger than " .. MAX_RESPONSE .. " bytes" end
    parts[#parts + 1] = data
  end
  if err ~= "closed" then return nil, tostring(err) end
  return table.concat(parts)
end

local function post(url, body)
  local host, port, path = parse_url(url)
  if not host then return nil, "not an http:// URL" end
  local address, err = responder_address(host, port)
  if not address then return nil, err end
  local sock = ngx.socket.tcp()
  sock:settimeouts(TIMEOUT_MS, TIMEOUT_MS, TIMEOUT_MS)
  local ok
  ok, err = sock:connect(address, port)
  if not ok then return nil, "connect: " .. tostring(err) end
  local host_header = host:find(":", 1, true) and "[" .. host .. "]" or host
  if port ~= 80 then host_header = host_header .. ":" .. port end
  ok, err = sock:send("POST " .. path .. " HTTP/1.0\r\nHost: " .. host_header
    .. "\r\nContent-Type: application/ocsp-request\r\nContent-Length: " .. #body
    .. "\r\nConnection: close\r\n\r\n" .. body)
  if not ok then
    sock:close()
    return nil, "send: " .. tostring(err)
  end
  local response
  response, err = read_response(sock)
  sock:close()
  return response, err
end

local function fetch(premature, uid, der_chain)
  -- A worker shutting down (a reload) runs its timers early: let the next handshake ask again.
  if premature then
    cache:delete("fetching:" .. uid)
    return
  end
  local url, err = ocsp.get_ocsp_responder_from_der_chain(der_chain)
  if not url then
    if err then ngx.log(ngx.ERR, "certificate ", uid, ": cannot read its OCSP responder: ", err) end
    return -- no responder named: nothing to staple
  end
  local request
  request, err = ocsp.create_ocsp_request(der_chain)
  if not request then
    ngx.log(ngx.ERR, "certificate ", uid, ": cannot make an OCSP request (is the issuer in tls.crt?): ", err)
    return
  end
  local response
  response, err = post(url, request)
  if not response then
    ngx.log(ngx.WARN, "certificate ", uid, ": OCSP responder ", url, ": ", err)
    return
  end
  local ok
  ok, err = ocsp.validate_ocsp_response(response, der_chain)
  if not ok then
    ngx.log(ngx.WARN, "certificate ", uid, ": OCSP response not stapled: ", err)
    return
  end
  local forcible
  ok, err, forcible = cache:set(uid, response, REFRESH, ngx.time())
  if not ok then ngx.log(ngx.ERR, "cannot cache the OCSP response of certificate ", uid, ": ", err) end
  if forcible then ngx.log(ngx.WARN, "ocsp_response_cache is full: older OCSP responses were dropped") end
end

--- In ssl_certificate_by_lua, after the certificate `uid` (DER chain `der_chain`) was set.
function _M.staple(uid, der_chain)
  local response, fetched_at, stale = cache:get_stale(uid)
  if not response or stale then
    -- One attempt per certificate per RETRY seconds, whichever worker makes it.
    if cache:add("fetching:" .. uid, true, RETRY) then
      local ok, err = ngx.timer.at(0, fetch, uid, der_chain)
      if not ok then ngx.log(ngx.ERR, "cannot start the OCSP fetch of certificate ", uid, ": ", err) end
    end
  end
  if response and ngx.time() - (fetched_at or 0) <= MAX_AGE then
    local ok, err = ocsp.set_ocsp_status_resp(response)
    if not ok then ngx.log(ngx.ERR, "cannot staple the OCSP response of certificate ", uid, ": ", err) end
  end
end

return _M
