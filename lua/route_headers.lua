-- A dynamic route's custom-headers (route-table field `headers`: name/value pairs;
-- src/model/core/route-settings.ts): the response headers the location's more_set_headers would set,
-- on every answer of the route (its 403, 503 and redirects too), set in the router location's
-- header filter. Names NGINX sets itself, and values it would trim, keep the Ingress static.
local ngx = ngx
local type = type

local _M = {}

--- Whether some route table of this worker had such a route: until then the header filter
--- never looks at ngx.ctx for them.
_M.in_use = false

--- At table compile time.
function _M.compile(e)
  if type(e.headers) ~= "table" then
    e.headers = nil -- JSON null: absent
    return
  end
  _M.in_use = true
end

--- In the router's rewrite phase, before anything answers: the headers for this request.
function _M.rewrite(e)
  if e.headers then ngx.ctx.route_headers = e.headers end
end

--- In the header filter.
function _M.header_filter(ctx)
  local list = ctx.route_headers
  if not list then return end
  local header = ngx.header
  for i = 1, #list do
    local h = list[i]
    header[h[1]] = h[2]
  end
end

return _M
