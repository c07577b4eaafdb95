-- External authentication over kept-alive connections (auth-keepalive). auth_request's
-- subrequest never gives its upstream connection back when the auth answer has a body (nginx
-- ticket 1579), so here the access phase makes the subrequest itself (ngx.location.capture) to
-- the same internal auth location, whose upstream keeps connections; the peer is chosen first
-- (external_peer.lua: the address policy judges it). The answer is read as auth_request reads
-- it: 2xx lets the request through, 401 and 403 refuse it, anything else is an error (500).
local ngx = ngx
local external_peer = require("external_peer")

local _M = {}

local warn = external_peer.throttled_log(ngx.ERR, 1, "external auth")

local function first(value)
  if type(value) == "table" then return value[1] end
  return value
end

--- opts: host (or host_from_request: the request's $host, as an auth-url of `http://$host/…`)
--- and port of the auth service, share_vars (auth-keepalive-share-vars), headers (the
--- auth-response-headers, copied into $authHeader0, $authHeader1, …). The location declares
--- $auth_cookie and those variables.
function _M.call(location, opts)
  local host = opts.host
  if opts.host_from_request then host = ngx.var.host end
  local address, why = external_peer.resolve(host, opts.port)
  if not address then
    warn(location, why)
    return ngx.exit(ngx.HTTP_INTERNAL_SERVER_ERROR)
  end
  local res = ngx.location.capture(location, {
    method = ngx.HTTP_GET, body = "", share_all_vars = opts.share_vars,
    ctx = { external_peer = { address = address, port = opts.port } },
  })
  local header = {}
  for name, value in pairs(res.header) do header[name:lower()] = first(value) end
  ngx.var.auth_cookie = header["set-cookie"] or ""
  local status = res.status
  if status >= 200 and status < 300 then
    for i, name in ipairs(opts.headers or {}) do
      ngx.var["authHeader" .. (i - 1)] = header[name:lower()] or ""
    end
    return
  end
  if status == ngx.HTTP_UNAUTHORIZED or status == ngx.HTTP_FORBIDDEN then
    if status == ngx.HTTP_UNAUTHORIZED and header["www-authenticate"] then
      ngx.header["WWW-Authenticate"] = header["www-authenticate"]
    end
    return ngx.exit(status)
  end
  warn(location, "the auth service answered ", status)
  return ngx.exit(ngx.HTTP_INTERNAL_SERVER_ERROR)
end

return _M
