-- Passive health checks, per worker: a peer whose try failed (NGINX's "failed": refused, reset,
-- timed out, or an answer proxy_next_upstream passed on other than 403 and 404) is skipped for
-- FAIL_TIMEOUT seconds while another peer of its backend is live, as NGINX's max_fails=1
-- fail_timeout=10s do for a static upstream. An old pod that stopped accepting in a rolling
-- update then costs each worker one failed try (retried on another peer), not one request in N
-- until the controller's next sync removes it. Round robin and hashing only: EWMA and cookie
-- affinity keep their own per-request tries, and the cookie names the peer it chose.
local ngx = ngx

local FAIL_TIMEOUT = 10 -- seconds

local _M = {}

--- The peer of the try that just failed. $upstream_addr lists the request's tries, ", " between
--- tries and " : " between upstream groups; the try in progress has no address yet ("a, b : ").
local function failed_peer()
  local tried = ngx.var.upstream_addr
  if not tried then return nil end
  local before = tried:match("^(.*) : $")
  if not before then return nil end
  return before:match(".*[,:] (.+)$") or before
end

--- Called on a retry (balance() after a failure): marks the peer that failed.
function _M.failed(balancer)
  local key = failed_peer()
  if not key then return end
  for _, endpoint in ipairs(balancer.endpoints) do
    if endpoint.key == key then
      local marks = balancer.failed_peers or {}
      marks[key] = ngx.now() + FAIL_TIMEOUT
      balancer.failed_peers = marks
      return
    end
  end
end

local function healthy(balancer, endpoint, now)
  local marks = balancer.failed_peers
  local until_time = marks and marks[endpoint.key]
  if not until_time then return true end
  if until_time > now then return false end
  marks[endpoint.key] = nil
  if next(marks) == nil then balancer.failed_peers = nil end
  return true
end

--- `endpoint` (the balancer's choice) or, if it failed lately, another live peer: round robin
--- moves on by itself; a hashing balancer would choose the same again, so the next live one in
--- its list is taken. When every peer failed lately, the choice stands (a try is better than none).
function _M.live(balancer, endpoint)
  local now = ngx.now()
  if healthy(balancer, endpoint, now) then return endpoint end
  local endpoints = balancer.endpoints
  local n = #endpoints
  if balancer.name == "round_robin" then
    for _ = 2, n do
      local candidate = balancer:balance()
      if healthy(balancer, candidate, now) then return candidate end
    end
    return endpoint
  end
  local at = 0
  for i = 1, n do
    if endpoints[i] == endpoint then at = i break end
  end
  for k = 1, n - 1 do
    local candidate = endpoints[(at + k - 1) % n + 1]
    if healthy(balancer, candidate, now) then return candidate end
  end
  return endpoint
end

--- After the backend's endpoints changed: marks of peers it no longer has go.
function _M.sync(balancer)
  local marks = balancer.failed_peers
  if not marks then return end
  local present = {}
  for _, endpoint in ipairs(balancer.endpoints) do present[endpoint.key] = true end
  for key in pairs(marks) do
    if not present[key] then marks[key] = nil end
  end
  if next(marks) == nil then balancer.failed_peers = nil end
end

return _M
