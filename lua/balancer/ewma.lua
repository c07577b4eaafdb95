-- Peak-EWMA with the power of two choices: two random endpoints, the one with the lower
-- decayed moving average of (connect + header) time wins. The averages live in the
-- balancer_ewma shared dicts, so every worker learns from every response.
local util = require("util")
local ngx = ngx
local exp = math.exp

local DECAY_TIME = 10 -- seconds for an average to fall to 1/e of itself without new samples

local ewma_dict = ngx.shared.balancer_ewma
local touched_dict = ngx.shared.balancer_ewma_last_touched_at

local _M = { name = "ewma", per_request_state = true }
_M.__index = _M

local function decayed(key, now)
  local ewma = ewma_dict:get(key)
  if not ewma then return 0 end
  local touched = touched_dict:get(key) or now
  return ewma * exp(-math.max(now - touched, 0) / DECAY_TIME)
end

--- Folds one response time into the endpoint's average. Without resty.lock (not packaged in
--- Debian) two workers may interleave here; the cost is one lost sample, never a wrong peer.
local function observe(key, rtt, now)
  local ewma = ewma_dict:get(key)
  if ewma then
    local touched = touched_dict:get(key) or now
    local weight = exp(-math.max(now - touched, 0) / DECAY_TIME)
    ewma = ewma * weight + rtt * (1 - weight)
  else
    ewma = rtt
  end
  ewma_dict:set(key, ewma)
  touched_dict:set(key, now)
end

function _M.new(self, backend)
  return setmetatable({ endpoints = backend.endpoints }, self)
end

function _M.sync(self, backend)
  if util.same_endpoints(self.endpoints, backend.endpoints) then return end
  -- Forget removed endpoints so a re-added one starts fresh.
  local keep = {}
  for _, endpoint in ipairs(backend.endpoints) do keep[endpoint.key] = true end
  for _, endpoint in ipairs(self.endpoints) do
    if not keep[endpoint.key] then
      ewma_dict:delete(endpoint.key)
      touched_dict:delete(endpoint.key)
    end
  end
  self.endpoints = backend.endpoints
end

function _M.balance(self)
  local endpoints = self.endpoints
  local n = #endpoints
  if n == 1 then return endpoints[1] end
  local tried = ngx.ctx.balancer_tried
  local i = math.random(n)
  local j = math.random(n - 1)
  if j >= i then j = j + 1 end
  local a, b = endpoints[i], endpoints[j]
  if tried then
    if tried[a.key] and not tried[b.key] then return b end
    if tried[b.key] and not tried[a.key] then return a end
  end
  local now = ngx.now()
  if decayed(b.key, now) < decayed(a.key, now) then return b end
  return a
end

local function last_entry(value)
  if not value then return nil end
  return value:match("([^,%s]+)%s*$")
end

function _M.after_balance(_)
  local key = last_entry(ngx.var.upstream_addr)
  local connect = tonumber(last_entry(ngx.var.upstream_connect_time))
  local header = tonumber(last_entry(ngx.var.upstream_header_time))
  if not key or not connect or not header then return end
  observe(key, connect + header, ngx.now())
end

_M.decayed_score = decayed

return _M
