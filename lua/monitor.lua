-- Request metrics, ingress-nginx's monitor aggregated in the worker: the log phase adds each
-- request to its series (the label values) in this worker's table, with histogram buckets
-- already counted; every second the worker sends the table to the controller's unix socket and
-- starts a new one. The controller adds the deltas to its cumulative series.
local cjson = require("cjson.safe")
local ngx = ngx
local var = ngx.var
local string_byte = string.byte
local math_floor = math.floor
local tonumber = tonumber
local tostring = tostring
local ipairs = ipairs

local _M = {}

local FLUSH_INTERVAL = 1 -- second
local SEP = "\0" -- no label value can hold a NUL: NGINX refuses it in hosts and nginx.conf

-- Methods keep their name; any other token a client sends is counted as OTHER, so that
-- clients cannot mint series (NGINX accepts any upper-case token as a method).
local KNOWN_METHODS = {
  GET = true, HEAD = true, POST = true, PUT = true, DELETE = true, CONNECT = true,
  OPTIONS = true, TRACE = true, PATCH = true, PROPFIND = true, PROPPATCH = true,
  MKCOL = true, COPY = true, MOVE = true, LOCK = true, UNLOCK = true,
}

-- Set once by configure() in init_by_lua (before the workers fork); nil: metrics are off.
local config = nil

-- This worker's table since the last flush.
local series = {}
local list = {}
local count = 0
local dropped = 0
local send_failing = false

-- Histogram slots of a series record, after its labels (1..8) and request count (9).
local REQUEST_DURATION, RESPONSE_DURATION, HEADER_DURATION, CONNECT_DURATION = 10, 11, 12, 13
local REQUEST_SIZE, RESPONSE_SIZE, BYTES_SENT, UPSTREAM_LATENCY = 14, 15, 16, 17
local SLOTS = 17

--- config: socket (path), per_host, per_undefined_host, status_classes, time_buckets,
--- length_buckets, size_buckets, max_series (per worker per flush), and `families`: the names
--- of the families to collect (those not excluded with --exclude-socket-metrics).
function _M.configure(c)
  local families = {}
  for _, name in ipairs(c.families or {}) do families[name] = true end
  c.families = families
  c.n_time = #c.time_buckets
  c.n_length = #c.length_buckets
  c.n_size = #c.size_buckets
  config = c
end

-- An empty histogram: its sum, then one count per bucket and one for +Inf.
local function new_histogram(n)
  local h = { 0 }
  for i = 2, n + 2 do h[i] = 0 end
  return h
end

--- Adds v (nil: nothing to observe) to the histogram in rec[slot].
local function observe(rec, slot, buckets, n, v)
  if v == nil then return end
  local h = rec[slot]
  if not h then
    h = new_histogram(n)
    rec[slot] = h
  end
  h[1] = h[1] + v
  local i = 1
  while i <= n and v > buckets[i] do i = i + 1 end
  h[i + 1] = h[i + 1] + 1
end

local function send(payload)
  local sock = ngx.socket.tcp()
  sock:settimeout(2000)
  local ok, err = sock:connect("unix:" .. config.socket)
  if ok then
    ok, err = sock:send(payload)
    sock:close()
  end
  if not ok then
    if not send_failing then
      ngx.log(ngx.WARN, "request metrics not delivered to ", config.socket, ": ", err)
    end
    send_failing = true
    return
  end
  send_failing = false
end

--- Sends this worker's table and starts a new one; also when the worker exits (premature), so
--- that a reload loses no counts.
local function flush()
  if count == 0 and dropped == 0 then return end
  local batch, lost = list, dropped
  series, list, count, dropped = {}, {}, 0, 0
  -- Histograms never observed stay `false`, so that JSON keeps every slot.
  for i = 1, #batch do
    local rec = batch[i]
    for slot = REQUEST_DURATION, SLOTS do
      if rec[slot] == nil then rec[slot] = false end
    end
  end
  local payload, err = cjson.encode({ v = 1, dropped = lost, series = batch })
  if not payload then
    ngx.log(ngx.ERR, "request metrics not encoded: ", err)
    return
  end
  send(payload)
end

function _M.init_worker()
  if not config then return end
  local ok, err = ngx.timer.every(FLUSH_INTERVAL, flush)
  if not ok then
    ngx.log(ngx.ERR, "request metrics timer not started: ", err)
  end
end

--- The log phase, inherited by every location. Locations of no Ingress server (the default
--- server, the status server, www redirects) set no $namespace and are not counted, nor are
--- subrequests (auth_request).
function _M.call()
  if not config or ngx.is_subrequest then return end
  local namespace = var.namespace
  if namespace == nil then return end

  local host = ""
  if config.per_host then
    host = var.host or ""
    if not config.per_undefined_host then
      -- The host of an exact server_name is one of its names (NGINX chose the server by it);
      -- in the catch-all and wildcard servers only the server's own name counts as defined,
      -- as in ingress-nginx (whose defined hosts are the servers' names).
      local server_name = var.server_name
      if host ~= server_name and (server_name == "_" or string_byte(server_name, 1) == 42) then
        return
      end
    end
  end

  local status = var.status or "-"
  if config.status_classes and status ~= "-" then
    status = status:sub(1, 1) .. "xx"
  end
  local method = ngx.req.get_method()
  if not KNOWN_METHODS[method] then method = "OTHER" end
  local ingress = var.ingress_name or "-"
  local service = var.service_name or "-"
  local path = var.location_path or "-"
  local canary = var.proxy_alternative_upstream_name or "-"

  local key = namespace .. SEP .. ingress .. SEP .. service .. SEP .. path .. SEP .. canary
    .. SEP .. method .. SEP .. status .. SEP .. host
  local rec = series[key]
  if not rec then
    if count >= config.max_series then
      dropped = dropped + 1
      return
    end
    rec = { namespace, ingress, service, path, canary, method, status, host, 0 }
    count = count + 1
    series[key] = rec
    list[count] = rec
  end
  rec[9] = rec[9] + 1

  local families = config.families
  local tb, nt = config.time_buckets, config.n_time
  if families.request_duration_seconds then
    -- $request_time, without formatting and parsing it: the same millisecond clock.
    local t = math_floor((ngx.now() - ngx.req.start_time()) * 1000 + 0.5) / 1000
    observe(rec, REQUEST_DURATION, tb, nt, t)
  end
  local lb, nl = config.length_buckets, config.n_length
  if families.request_size then observe(rec, REQUEST_SIZE, lb, nl, tonumber(var.request_length)) end
  if families.response_size or families.bytes_sent then
    local v = tonumber(var.bytes_sent)
    if families.response_size then observe(rec, RESPONSE_SIZE, lb, nl, v) end
    if families.bytes_sent then observe(rec, BYTES_SENT, config.size_buckets, config.n_size, v) end
  end

  -- A request NGINX answered itself has no upstream times; several tries ("0.001, 0.002")
  -- are not one number and, as in ingress-nginx, not observed.
  local response_time = var.upstream_response_time
  if response_time == nil then return end
  if families.response_duration_seconds then observe(rec, RESPONSE_DURATION, tb, nt, tonumber(response_time)) end
  if families.header_duration_seconds then observe(rec, HEADER_DURATION, tb, nt, tonumber(var.upstream_header_time)) end
  if families.connect_duration_seconds or families.ingress_upstream_latency_seconds then
    local v = tonumber(var.upstream_connect_time)
    if v then
      if families.connect_duration_seconds then observe(rec, CONNECT_DURATION, tb, nt, v) end
      if families.ingress_upstream_latency_seconds then
        -- The summary needs the values: connect times are whole milliseconds, so count each.
        local ms = rec[UPSTREAM_LATENCY]
        if not ms then
          ms = {}
          rec[UPSTREAM_LATENCY] = ms
        end
        local k = tostring(math_floor(v * 1000 + 0.5))
        ms[k] = (ms[k] or 0) + 1
      end
    end
  end
end

-- For tests: what the worker holds now.
_M._pending = function() return list, dropped end

return _M
