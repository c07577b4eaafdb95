-- permanent-redirect / temporal-redirect and app-root of a dynamic route, answered as the host's
-- static location answers them: its `return <code> <url>` (variables evaluated, a URL starting
-- with `/` made absolute as NGINX's header filter does under the location's absolute_redirect and
-- port_in_redirect), then its `if ($uri = /) { return 302 $scheme://$redirect_http_host<app-root>; }`.
-- The fields come from src/model/core/route-uri.ts; lua/configuration_shapes.lua checked them.
local util = require("util")
local evaluate, header_value = util.evaluate_var_template, util.header_value
local ngx = ngx
local tonumber, type = tonumber, type
local string_byte = string.byte

local _M = {}

-- What the header filter sends for a Location starting with `/` (server_name_in_redirect off):
-- the scheme, the request's host, the port when port_in_redirect and not the scheme's default.
local function absolute(path, port_in_redirect)
  local var = ngx.var
  local scheme = var.scheme
  local port = ""
  if port_in_redirect then
    local p = tonumber(var.server_port)
    if p ~= (scheme == "https" and 443 or 80) then port = ":" .. p end
  end
  return scheme .. "://" .. var.host .. port .. path
end

--- Answers the request when the route redirects it (ngx.exit ends the handler); else returns.
function _M.apply(e)
  local r = e["return"]
  -- JSON null (decoded as a non-nil value) stands for an absent field.
  if type(r) == "table" then
    -- A variable may hold decoded bytes ($uri's %0d%0a): escaped as a location's value is.
    local url = header_value(evaluate(r.parts))
    if r.absolute and string_byte(url, 1) == 47 then url = absolute(url, r.port) end
    -- Set through ngx.header, a Location starting with `/` stays as it is (relative-redirects).
    ngx.header["Location"] = url
    return ngx.exit(r.code)
  end
  local root = e.appRoot
  if type(root) == "string" and ngx.var.uri == "/" then
    local var = ngx.var
    -- The validated host and the Host header's port, never the raw header (nginx.conf.liquid).
    ngx.header["Location"] = var.scheme .. "://" .. var.redirect_http_host .. root
    return ngx.exit(302)
  end
end

return _M
