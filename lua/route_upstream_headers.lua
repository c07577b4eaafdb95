-- The headers a dynamic route's static location would send upstream in place of the standard
-- ones: X-Forwarded-Prefix (x-forwarded-prefix), Host (upstream-vhost, its variables evaluated as
-- in the location's quoted value) and Connection (connection-proxy-header). The router's location
-- sends Host and Connection from $dynamic_upstream_host and $dynamic_connection
-- (src/render/dynamic-routes.ts), which hold the standard values unless set here.
local ngx = ngx
local type = type
local util = require("util")
local evaluate, header_value = util.evaluate_var_template, util.header_value

local _M = {}

function _M.apply(e)
  local prefix, vhost, connection = e.xForwardedPrefix, e.upstreamVhost, e.connection
  -- A client's own X-Forwarded-Prefix is replaced, as proxy_set_header replaces it.
  -- JSON null (decoded as a non-nil value) stands for an absent field.
  if type(prefix) == "string" then ngx.req.set_header("X-Forwarded-Prefix", prefix) end
  -- A variable may hold decoded bytes ($uri's %0d%0a): escaped as a location's value is.
  if type(vhost) == "table" then ngx.var.dynamic_upstream_host = header_value(evaluate(vhost)) end
  if type(connection) == "string" then ngx.var.dynamic_connection = connection end
end

return _M
