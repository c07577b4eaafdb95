-- A dynamic route's enable-cors or HTTPRoute CORS filter (route-table field `cors`: the pattern an
-- allowed Origin matches, '' for every origin, and the Access-Control-* headers after Allow-Origin;
-- src/model/core/route-settings.ts, src/model/gateway/filters.ts), as the location's `if` blocks do it: a request whose Origin is
-- allowed gets the whole set on every answer, its preflight (OPTIONS) is answered 204 before
-- the SSL redirect, the backend and the source ranges are looked at (rewrite-module directives
-- run before the location's Lua and access phases); other origins get nothing.
local pcre2 = require("pcre2")
local ngx = ngx
local type = type

local _M = {}

--- Whether some route table of this worker had such a route (see route_headers.in_use).
_M.in_use = false

--- At table compile time: the origin pattern compiled as `~*` compiles it; nil and PCRE2's
--- message when it does not compile.
function _M.compile(e)
  local c = e.cors
  if type(c) ~= "table" then
    e.cors = nil -- JSON null: absent
    return true
  end
  _M.in_use = true
  if c.origin ~= "" then
    local code, err = pcre2.compile(c.origin, true)
    if not code then return nil, err end
    c.code = code
  end
  return true
end

--- In the router's rewrite phase: remembers an allowed origin for the header filter, answers
--- its preflight.
function _M.rewrite(e)
  local c = e.cors
  if not c then return end
  local origin = "*"
  if c.code then
    origin = ngx.var.http_origin
    if not origin then return end
    local ok, err = pcre2.find(c.code, origin)
    if ok == nil then
      ngx.log(ngx.ERR, "router: cors origin of ", e.ingress, ": ", err)
      return ngx.exit(ngx.HTTP_INTERNAL_SERVER_ERROR) -- as NGINX when a regex of `if` fails
    end
    if not ok then return end
  end
  local ctx = ngx.ctx
  ctx.route_cors = c
  ctx.route_cors_origin = origin
  if ngx.var.request_method == "OPTIONS" then
    ctx.route_cors_preflight = true
    return ngx.exit(ngx.HTTP_NO_CONTENT)
  end
end

--- In the header filter, after the route's custom headers (more_set_headers of the `if` block
--- come after the location's own).
function _M.header_filter(ctx)
  local c = ctx.route_cors
  if not c then return end
  local header = ngx.header
  header["Access-Control-Allow-Origin"] = ctx.route_cors_origin
  local list = c.headers
  for i = 1, #list do
    local h = list[i]
    header[h[1]] = h[2]
  end
  -- An HTTPRoute's `*` with credentials: the preflight's own request is what is allowed.
  if c.echoMethods then
    local m = ngx.var.http_access_control_request_method
    if m then header["Access-Control-Allow-Methods"] = m end
  end
  if c.echoHeaders then
    local h = ngx.var.http_access_control_request_headers
    if h then header["Access-Control-Allow-Headers"] = h end
  end
  if ctx.route_cors_preflight then
    header["Content-Type"] = "text/plain; charset=utf-8"
    header["Content-Length"] = "0"
  end
end

return _M
