-- OpenTelemetry tracing without an NGINX module: a SERVER span for each request of the locations
-- that ask for it (start in the rewrite phase, end in the log phase), the W3C trace context
-- (traceparent, tracestate) passed upstream, and spans batched per worker and exported to the
-- collector as OTLP/HTTP JSON (POST /v1/traces) from a timer, never from a request.
local cjson = require("cjson.safe")
local ffi = require("ffi")
local get_request = require("resty.core.base").get_request
local ngx = ngx
local ngx_var = ngx.var
local random = math.random
local string_format = string.format
local tonumber = tonumber
local tostring = tostring

local _M = {}

local DEFAULTS = {
  host = "",
  port = 4318,
  service_name = "nginx",
  sampler = "AlwaysOn",
  ratio = 0.01,
  parent_based = true,
  max_queue = 2048,
  delay_ms = 5000,
  batch = 512,
  scope_version = "",
}

-- Set once in init_by_lua (before workers fork); read-only afterwards.
local config = DEFAULTS
local resource_json = ""

-- This worker's spans waiting for export, and what was lost.
local queue, queued = {}, 0
local dropped, failed = 0, 0
local exporting = false
-- An export timer is pending: the requests that fill the queue further must not add their own.
local scheduled = false
local last_complaint = 0

-- The open spans of this worker's requests, by the address of the request. Not ngx.ctx: NGINX's
-- internal redirects (error pages, auth-signin) clear it, and the request's span would be lost.
-- The log phase, which NGINX runs for every request, removes the entry.
local open_spans, open_count = {}, 0
-- More open spans than a worker has requests in flight means some log phase never closed them:
-- forget them all rather than grow.
local MAX_OPEN = 100000
local function request_key()
  return tonumber(ffi.cast("uintptr_t", get_request()))
end

-- At most one line every 10 s per worker: a collector that is down must not flood the log.
-- Returns whether the line was written.
local function complain(...)
  local now = ngx.now()
  if now - last_complaint < 10 then return false end
  last_complaint = now
  ngx.log(ngx.WARN, "opentelemetry: ", ...)
  return true
end

function _M.configure(new_config)
  local merged = {}
  for k, v in pairs(DEFAULTS) do merged[k] = v end
  for k, v in pairs(new_config or {}) do merged[k] = v end
  if merged.batch > merged.max_queue then merged.batch = merged.max_queue end
  config = merged
  resource_json = cjson.encode({
    resource = { attributes = { { key = "service.name", value = { stringValue = merged.service_name } } } },
  })
end

local MAX32 = 4294967295

local function new_trace_id()
  local id = string_format("%08x%08x%08x%08x", random(0, MAX32), random(0, MAX32), random(0, MAX32), random(0, MAX32))
  -- All zeros is not a valid trace id (1 in 2^128, but the spec says so).
  if id == "00000000000000000000000000000000" then return new_trace_id() end
  return id
end

local function new_span_id()
  local id = string_format("%08x%08x", random(0, MAX32), random(0, MAX32))
  if id == "0000000000000000" then return new_span_id() end
  return id
end

-- The W3C traceparent of the client: trace id, parent span id and sampled flag, or nil.
local function parse_traceparent(value)
  if type(value) ~= "string" or #value < 55 then return nil end
  local version, trace_id, span_id, flags = value:match("^(%x%x)%-(%x+)%-(%x+)%-(%x%x)")
  if not version or version == "ff" or #trace_id ~= 32 or #span_id ~= 16 then return nil end
  -- Version 00 is exactly 55 characters; later versions may append fields.
  if version == "00" and #value ~= 55 then return nil end
  if trace_id:find("[A-F]") or span_id:find("[A-F]") then return nil end
  if trace_id == "00000000000000000000000000000000" or span_id == "0000000000000000" then return nil end
  return trace_id, span_id, tonumber(flags, 16) % 2 == 1
end

local function root_sampled(trace_id)
  local s = config.sampler
  if s == "AlwaysOn" then return true end
  if s == "AlwaysOff" then return false end
  -- TraceIdRatioBased: the trace id's low bits against the ratio, so every hop samples the same traces.
  return tonumber(trace_id:sub(25, 32), 16) < config.ratio * 4294967296
end

-- Rewrite phase: opens the request's span and sets the context the upstream sees. `trust`
-- continues the client's trace; `name` is the span's name: the operator's operation name, its
-- $variables expanded, or with `literal` a path, taken as it is (a tenant's path must not read
-- the request's variables into the collector). `namespace` and `route` name what the request
-- matched, as the metrics' namespace and ingress labels do (`httproute/<name>/<rule>` for an
-- HTTPRoute's rule); absent on the default backend.
function _M.start(trust, name, literal, namespace, route)
  if ngx.req.is_internal() then return end
  local trace_id, parent, parent_sampled
  if trust then
    local incoming = ngx_var.http_traceparent
    if incoming then trace_id, parent, parent_sampled = parse_traceparent(incoming) end
  end
  local sampled
  if trace_id and config.parent_based then
    sampled = parent_sampled
  else
    trace_id = trace_id or new_trace_id()
    sampled = root_sampled(trace_id)
  end
  local span_id = new_span_id()
  local key = request_key()
  if open_spans[key] == nil then
    open_count = open_count + 1
    if open_count > MAX_OPEN then
      complain(open_count - 1, " spans were never closed (a location's own log_by_lua?): forgotten")
      open_spans, open_count = {}, 1
    end
  end
  open_spans[key] = { trace_id = trace_id, span_id = span_id, parent = parent, sampled = sampled, name = name, literal = literal,
    namespace = namespace, route = route, started = ngx.req.start_time() }
  ngx.req.set_header("traceparent", "00-" .. trace_id .. "-" .. span_id .. (sampled and "-01" or "-00"))
  -- The client's tracestate belongs to its trace: kept only when that trace is continued.
  if not parent and ngx_var.http_tracestate then ngx.req.clear_header("tracestate") end
end

local function expand(name)
  if not name:find("$", 1, true) then return name end
  return (name:gsub("%$([%a_][%w_]*)", function(v) return ngx_var[v] or "" end))
end

local function flavor()
  local v = ngx.req.http_version()
  if v == 2 then return "2.0" end
  if v == 1.0 then return "1.0" end
  return "1.1"
end

-- A span waits for export as FIELDS consecutive slots of the queue (no table per span): ids,
-- name, times and what the attributes the OpenTelemetry module ingress-nginx loads sets are made of.
local FIELDS = 14

-- Log phase (every location inherits this call): closes the span and queues it for export.
function _M.finish()
  local key = request_key()
  local span = open_spans[key]
  if not span then return end
  open_spans[key] = nil
  open_count = open_count - 1
  local started = ngx.req.start_time()
  -- An earlier request at the same address whose log phase did not call us (a snippet's own
  -- log_by_lua) left its span: never close it as this one's.
  if span.started ~= started or not span.sampled or config.host == "" then return end
  if queued >= config.max_queue then
    dropped = dropped + 1
    return
  end
  local q, b = queue, queued * FIELDS
  q[b + 1] = span.trace_id
  q[b + 2] = span.span_id
  q[b + 3] = span.parent or false
  q[b + 4] = span.literal and span.name or expand(span.name)
  -- Milliseconds (NGINX's own clock), written as nanoseconds on export.
  q[b + 5] = math.floor(started * 1000 + 0.5)
  q[b + 6] = math.floor(ngx.now() * 1000 + 0.5)
  q[b + 7] = ngx.req.get_method()
  q[b + 8] = flavor()
  -- One variable for six (nginx.conf's map): each ngx.var read costs about half a microsecond.
  q[b + 9] = ngx_var.otel_request_fields or ""
  q[b + 10] = ngx_var.http_host or ""
  q[b + 11] = ngx_var.http_user_agent or ""
  q[b + 12] = ngx.status
  q[b + 13] = span.namespace or false
  q[b + 14] = span.route or false
  queued = queued + 1
  if queued >= config.batch and not exporting and not scheduled then
    local ok, err = ngx.timer.at(0, _M.export)
    if ok then scheduled = true else complain("cannot schedule an export: ", err) end
  end
end

local byte, find, sub = string.byte, string.find, string.sub

-- `s` with every byte that does not begin a well-formed UTF-8 sequence replaced by U+FFFD:
-- OTLP strings are UTF-8, and a collector refuses a whole batch over one client's Latin-1
-- User-Agent otherwise.
local function utf8_fixed(s)
  local out, i, n, from = nil, 1, #s, 1
  while i <= n do
    local c, len = byte(s, i), 0
    if c < 0x80 then len = 1
    elseif c >= 0xC2 and c <= 0xDF then len = 2
    elseif c >= 0xE0 and c <= 0xEF then len = 3
    elseif c >= 0xF0 and c <= 0xF4 then len = 4 end
    local ok = len > 0 and i + len - 1 <= n
    if ok and len > 1 then
      for k = i + 1, i + len - 1 do
        local d = byte(s, k)
        if d < 0x80 or d > 0xBF then ok = false break end
      end
      local d = byte(s, i + 1)
      -- Overlong forms, UTF-16 surrogates and code points above U+10FFFF.
      if (c == 0xE0 and d < 0xA0) or (c == 0xED and d > 0x9F) or (c == 0xF0 and d < 0x90) or (c == 0xF4 and d > 0x8F) then ok = false end
    end
    if ok then
      i = i + len
    else
      out = out or {}
      out[#out + 1] = sub(s, from, i - 1)
      out[#out + 1] = "\239\191\189"
      i = i + 1
      from = i
    end
  end
  if not out then return s end
  out[#out + 1] = sub(s, from)
  return table.concat(out)
end

-- A JSON string: most values need no escape, the rest go through cjson. (The method, which
-- NGINX takes as A-Z, _ and -, the server's name, the scheme and an address need none.)
local function js(v)
  if not v:find('[%c"\\\128-\255]') then return '"' .. v .. '"' end
  if v:find("[\128-\255]") then v = utf8_fixed(v) end
  return cjson.encode(v)
end

local SPAN = '{"traceId":"%s","spanId":"%s"%s,"name":%s,"kind":2,"startTimeUnixNano":"%d000000","endTimeUnixNano":"%d000000","attributes":['
  .. '{"key":"http.method","value":{"stringValue":"%s"}},{"key":"http.flavor","value":{"stringValue":"%s"}},'
  .. '{"key":"http.target","value":{"stringValue":%s}},{"key":"http.server_name","value":{"stringValue":"%s"}},'
  .. '{"key":"http.host","value":{"stringValue":%s}},{"key":"http.user_agent","value":{"stringValue":%s}},'
  .. '{"key":"http.scheme","value":{"stringValue":"%s"}},{"key":"net.host.port","value":{"intValue":"%d"}},'
  .. '{"key":"net.peer.ip","value":{"stringValue":"%s"}},{"key":"net.peer.port","value":{"intValue":"%d"}},'
  .. '{"key":"http.status_code","value":{"intValue":"%d"}}%s]}'

-- What the request matched: the front end (an HTTPRoute's rule or an Ingress), its namespace and
-- its name as the metrics label it.
local function route_attributes(namespace, route)
  if not route or route == "" then return "" end
  local frontend = route:find("^httproute/") and "httproute" or "ingress"
  return ',{"key":"ingress_rx.frontend","value":{"stringValue":"' .. frontend .. '"}},'
    .. '{"key":"k8s.namespace.name","value":{"stringValue":' .. js(namespace or "") .. '}},'
    .. '{"key":"ingress_rx.route","value":{"stringValue":' .. js(route) .. '}}'
end


-- The spans in slots [from, to) of `q` as an OTLP/JSON array.
local function spans_json(q, from, to)
  local parts = {}
  for i = from, to - 1 do
    local b = i * FIELDS
    local parent = q[b + 3]
    -- "$server_port $remote_port $remote_addr $scheme $server_name $request_uri": none of the
    -- first five holds a space; the URI is the rest, whatever it holds.
    local r = q[b + 9]
    local p1 = find(r, " ", 1, true) or #r + 1
    local p2 = find(r, " ", p1 + 1, true) or #r + 1
    local p3 = find(r, " ", p2 + 1, true) or #r + 1
    local p4 = find(r, " ", p3 + 1, true) or #r + 1
    local p5 = find(r, " ", p4 + 1, true) or #r + 1
    parts[#parts + 1] = string_format(SPAN, q[b + 1], q[b + 2], parent and (',"parentSpanId":"' .. parent .. '"') or "", js(q[b + 4]),
      q[b + 5], q[b + 6], q[b + 7], q[b + 8], js(sub(r, p5 + 1)), sub(r, p4 + 1, p5 - 1), js(q[b + 10]), js(q[b + 11]),
      sub(r, p3 + 1, p4 - 1), tonumber(sub(r, 1, p1 - 1)) or 0, sub(r, p2 + 1, p3 - 1), tonumber(sub(r, p1 + 1, p2 - 1)) or 0, q[b + 12],
      route_attributes(q[b + 13], q[b + 14]))
  end
  return "[" .. table.concat(parts, ",") .. "]"
end

-- One OTLP/HTTP request; returns true when the collector took the spans. The collector's address
-- is judged by the upstream address policy like every other address NGINX dials (a name: every
-- answer), so not even a misspelt or hijacked collector name leads to a metadata service.
local function post(body)
  local address, why = require("external_peer").resolve(config.host, config.port)
  if not address then return false, "collector " .. config.host .. ":" .. config.port .. ": " .. tostring(why) end
  local sock = ngx.socket.tcp()
  sock:settimeout(5000)
  local ok, err = sock:connect(address, config.port)
  if not ok then return false, "connect to " .. config.host .. ":" .. config.port .. ": " .. tostring(err) end
  local host = config.host:find(":", 1, true) and ("[" .. config.host .. "]") or config.host
  local req = "POST /v1/traces HTTP/1.1\r\nHost: " .. host .. ":" .. config.port
    .. "\r\nContent-Type: application/json\r\nUser-Agent: ingress-rx\r\nContent-Length: " .. #body .. "\r\n\r\n" .. body
  local sent, serr = sock:send(req)
  if not sent then sock:close() return false, "send: " .. tostring(serr) end
  local line, lerr = sock:receive("*l")
  if not line then sock:close() return false, "no answer: " .. tostring(lerr) end
  local status = tonumber(line:match("^HTTP/%d%.%d (%d%d%d)"))
  local length, close = 0, false
  while true do
    local h = sock:receive("*l")
    if not h then sock:close() return false, "the answer's headers end early" end
    if h == "" then break end
    local k, v = h:match("^([^:]+):%s*(.*)$")
    if k then
      k = k:lower()
      if k == "content-length" then length = tonumber(v) or 0
      elseif k == "connection" and v:lower() == "close" then close = true
      elseif k == "transfer-encoding" then close = true end
    end
  end
  if length > 0 and not close then sock:receive(length) end
  if close then sock:close() else sock:setkeepalive(60000, 2) end
  if status and status >= 200 and status < 300 then return true end
  return false, "the collector answered " .. tostring(status or line)
end

-- Posts the spans in slots [0, n), a batch per request; returns how many the collector refused
-- and the last reason.
local function export_all(spans, n)
  local lost, reason = 0, nil
  for first = 0, n - 1, config.batch do
    local last = math.min(n, first + config.batch)
    local body = '{"resourceSpans":[' .. resource_json:sub(1, -2)
      .. ',"scopeSpans":[{"scope":{"name":"ingress-rx","version":' .. cjson.encode(config.scope_version) .. '},"spans":'
      .. spans_json(spans, first, last) .. "}]}]}"
    local ok, err = post(body)
    if not ok then lost, reason = lost + (last - first), err end
  end
  return lost, reason
end

-- Exports what the worker holds (timer context). At most one log line every 10 s: the spans lost
-- and dropped since the last line. A line the limit held back is written by a later call, also
-- when nothing is queued, so a failure is reported even if no request follows it.
local reported_dropped, reported_failed, last_reason = 0, 0, nil
function _M.export()
  scheduled = false
  if exporting then return end
  if queued > 0 then
    exporting = true
    local spans, n = queue, queued
    queue, queued = {}, 0
    local ok, lost, reason = pcall(export_all, spans, n)
    exporting = false
    if not ok then lost, reason = n, lost end
    failed = failed + lost
    if lost > 0 then last_reason = reason end
  end
  local newly_failed, newly_dropped = failed - reported_failed, dropped - reported_dropped
  if newly_failed == 0 and newly_dropped == 0 then return end
  local msg = {}
  if newly_failed > 0 then msg[#msg + 1] = "export of " .. newly_failed .. " spans failed (" .. failed .. " lost so far): " .. tostring(last_reason) end
  if newly_dropped > 0 then msg[#msg + 1] = dropped .. " spans dropped so far: the queue (otel-max-queuesize " .. config.max_queue .. ") was full" end
  if complain(table.concat(msg, "; ")) then reported_failed, reported_dropped = failed, dropped end
end

function _M.init_worker()
  -- Seed per worker: the ids of two workers must differ.
  local f = io.open("/dev/urandom", "rb")
  local seed = ngx.now() * 1000 + ngx.worker.pid()
  if f then
    local b = f:read(4)
    f:close()
    if b and #b == 4 then seed = seed + b:byte(1) * 16777216 + b:byte(2) * 65536 + b:byte(3) * 256 + b:byte(4) end
  end
  math.randomseed(seed)
  local ok, err = ngx.timer.every(config.delay_ms / 1000, _M.export)
  if not ok then ngx.log(ngx.ERR, "opentelemetry: cannot start the export timer: ", err) end
end

-- For tests and dbg: what this worker holds and lost.
function _M.stats()
  return { queued = queued, dropped = dropped, failed = failed }
end

return _M
