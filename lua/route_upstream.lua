-- A dynamic route's proxy timeouts and next-upstream tries (route-table fields `timeouts`,
-- `tries`; src/model/core/route-settings.ts): what proxy_*_timeout and proxy_next_upstream_tries in
-- the host's static location would give, applied in the balancer phase. The router's location
-- inherits the http level's values; a route carries only what differs from them.
-- An HTTPRoute's `retry` (src/model/gateway/retry.ts) gives its tries exactly: 1 + attempts, on
-- one endpoint as on several; which failures are retried is its router location's
-- proxy_next_upstream (router.lua moves the request to the location of its codes).
local ngx_balancer = require("ngx.balancer")
local ngx = ngx
local math_min = math.min

local _M = {}

--- Whether some route table of this worker had such a route: until then the balancer phase
--- never looks at ngx.ctx for them (the hot path of plain routes and static locations).
_M.in_use = false

--- At table compile time: the entry's timeouts in the form set_timeouts takes (nil = keep the
--- http level's), once per table version.
function _M.compile(e)
  local t = type(e.timeouts) == "table" and e.timeouts or nil -- JSON null: absent
  if type(e.tries) ~= "number" then e.tries = nil end
  if type(e.retry) == "table" then e.retry_tries = 1 + e.retry.attempts else e.retry = nil end
  if t == nil and e.tries == nil and e.retry == nil then return end
  _M.in_use = true
  if t then
    e.upstream_timeouts = {
      t[1] > 0 and t[1] or nil, t[2] > 0 and t[2] or nil, t[3] > 0 and t[3] or nil,
    }
  end
end

--- In the router's rewrite phase: the route's settings for this request's balancer phase.
function _M.rewrite(e)
  if e.upstream_timeouts or e.tries or e.retry then ngx.ctx.route_upstream = e end
end

--- In the balancer phase, every try: sets the route's timeouts (NGINX keeps them for the later
--- tries too, as a location's) and gives the most tries allowed: `most`, or the route's fewer;
--- and, for a route with retries, the tries it gets whatever the endpoints.
function _M.balance(most)
  local e = ngx.ctx.route_upstream
  if not e then return most end
  local t = e.upstream_timeouts
  if t then
    local ok, err = ngx_balancer.set_timeouts(t[1], t[2], t[3])
    if not ok then ngx.log(ngx.ERR, "route ", e.ingress, ": cannot set timeouts: ", err) end
  end
  if e.retry_tries then return most, e.retry_tries end
  local tries = e.tries
  if tries and tries > 0 then return math_min(most, tries) end
  return most
end

return _M
