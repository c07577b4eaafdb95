-- Request mirroring (mirror-target). NGINX's mirror directive makes a background subrequest to
-- the Ingress's internal mirror location, whose content handler (send) copies the request and
-- hands the copy to a timer, then answers at once: the client's request never waits for the
-- mirror, however slow or dead it is. The timer dials the peer external_peer.lua chose (the
-- address policy judges every address a name or the request's Host leads to), sends the copy
-- and reads the mirror's answer away. Copies beyond a bound per worker are dropped, so a slow
-- mirror cannot take the timers the balancer needs.
local ngx = ngx
local external_peer = require("external_peer")

local _M = {}

-- Copies in flight per worker (each holds a running timer; lua_max_running_timers is 256), and
-- per mirror location: one Ingress's hung mirror takes at most a quarter of the slots, so the
-- other Ingresses' copies still go.
local MAX_IN_FLIGHT = 128
local MAX_IN_FLIGHT_PER_LOCATION = 32
local CHUNK = 65536

local in_flight = 0
local in_flight_at = {} -- mirror location → copies in flight; entries go when they reach 0
local warn = external_peer.throttled_log(ngx.WARN, 1, "mirror")

-- Every copy carries this header, and a request carrying it is not copied again: a target that
-- leads back to this controller (the Ingress's own public name) makes one extra request, not an
-- endless chain of copies of copies.
local MARK = "X-Ingress-Rx-Mirrored"

-- Headers of the client's connection, not of its request; the copy sets its own.
local NOT_COPIED = {
  ["connection"] = true, ["keep-alive"] = true, ["proxy-connection"] = true, ["te"] = true,
  ["trailer"] = true, ["transfer-encoding"] = true, ["upgrade"] = true, ["host"] = true,
  ["content-length"] = true, ["expect"] = true, [MARK:lower()] = true,
}

local function header_lines(host_header, body_length)
  local lines = { "Host: " .. host_header, MARK .. ": 1" }
  for name, value in pairs(ngx.req.get_headers(0, true)) do
    if not NOT_COPIED[name:lower()] and name:find("^[%w!#$%%&'*+%-.^_`|~]+$") then
      for _, v in ipairs(type(value) == "table" and value or { value }) do
        if not v:find("[\r\n]") then lines[#lines + 1] = name .. ": " .. v end
      end
    end
  end
  if body_length then lines[#lines + 1] = "Content-Length: " .. body_length end
  lines[#lines + 1] = "Connection: close"
  return table.concat(lines, "\r\n") .. "\r\n\r\n"
end

--- The request body as a string or an open file (NGINX removes its temporary file when the
--- client's request ends; the open handle keeps it readable), and its length; nil when none.
local function request_body()
  local data = ngx.req.get_body_data()
  if data then return data, nil, #data end
  local path = ngx.req.get_body_file()
  if not path then
    local declared = ngx.var.http_content_length or ngx.var.http_transfer_encoding
    return nil, nil, declared and 0 or nil
  end
  local file, err = io.open(path, "rb")
  if not file then return nil, nil, nil, err end
  local size = file:seek("end")
  file:seek("set", 0)
  return nil, file, size
end

--- The request target of the copy: $mirror_uri, which may hold header values (`$http_…`), with
--- white space and control characters percent-encoded so that it stays one request line.
local function request_target()
  local uri = ngx.var.mirror_uri or "/"
  uri = uri:gsub("[%s%c]", function(c) return string.format("%%%02X", c:byte()) end)
  if uri:sub(1, 1) ~= "/" then uri = "/" .. uri end
  return uri
end

local function deliver(job)
  local address, why = job.address, nil
  if not address then address, why = external_peer.resolve(job.host, job.port) end
  if not address then
    warn(job.name, "copy not sent: ", why)
    return
  end
  local sock = ngx.socket.tcp()
  sock:settimeouts(job.connect_timeout, job.send_timeout, job.read_timeout)
  local ok, err = sock:connect(external_peer.dial_address(address), job.port)
  if ok and job.tls then
    -- As NGINX's proxy_ssl defaults: SNI with the host name, the certificate not verified.
    ok, err = sock:sslhandshake(nil, job.sni, false)
  end
  if ok then ok, err = sock:send(job.head) end
  if ok and job.body then ok, err = sock:send(job.body) end
  if ok and job.file then
    while ok do
      local chunk = job.file:read(CHUNK)
      if not chunk then break end
      ok, err = sock:send(chunk)
    end
  end
  if ok then
    -- The answer is not used; reading it lets the mirror finish its request.
    repeat
      local data
      data, err = sock:receiveany(CHUNK)
    until not data
    if err == "closed" then err = nil end
  end
  sock:close()
  if err then warn(job.name, "copy to ", address, ":", job.port, " failed: ", err) end
end

local function run(premature, job)
  if not premature then
    local ok, err = pcall(deliver, job)
    if not ok then ngx.log(ngx.ERR, "mirror ", job.name, ": ", err) end
  end
  if job.file then job.file:close() end
  in_flight = in_flight - 1
  local left = in_flight_at[job.name] - 1
  in_flight_at[job.name] = left > 0 and left or nil
end

-- Hands the job to a timer unless this worker has too many copies in flight (of `name`, or in all).
local function start(job)
  local here = in_flight_at[job.name] or 0
  if here >= MAX_IN_FLIGHT_PER_LOCATION or in_flight >= MAX_IN_FLIGHT then
    warn(job.name, here, " copies of this location and ", in_flight, " in all in flight in this worker; copy dropped")
    if job.file then job.file:close() end
    return
  end
  local ok, err = ngx.timer.at(0, run, job)
  if ok then
    in_flight = in_flight + 1
    in_flight_at[job.name] = here + 1
  else
    if job.file then job.file:close() end
    warn(job.name, "copy dropped: ", err)
  end
end

-- Timeouts (ms) of an HTTPRoute mirror's copy: a hung mirror holds its slot at most this long.
local ROUTE_CONNECT_TIMEOUT, ROUTE_SEND_TIMEOUT, ROUTE_READ_TIMEOUT = 5000, 10000, 10000

--- HTTPRoute RequestMirror, from the router's rewrite phase: a copy of the request (its method,
--- the client's URI, its headers as the route's filters left them, its body) to `endpoint`
--- ({ address, port } of the mirror backend `name`, lua/balancer.lua), sent from a timer; the
--- client's request does not wait for it. A copy is never copied again (MARK).
function _M.copy(name, endpoint)
  if ngx.var.http_x_ingress_rx_mirrored then return end
  -- An HTTP/2 request may carry a body with neither Content-Length nor Transfer-Encoding.
  ngx.req.read_body()
  local data, file, length, err = request_body()
  if err then warn(name, "cannot read the request body: ", err) end
  local target = ngx.var.request_uri:gsub("[%s%c]", function(c) return string.format("%%%02X", c:byte()) end)
  start({
    name = name, address = endpoint.address, port = tonumber(endpoint.port), tls = false,
    head = ngx.req.get_method() .. " " .. target .. " HTTP/1.1\r\n" .. header_lines(ngx.var.host, length),
    body = data, file = file,
    connect_timeout = ROUTE_CONNECT_TIMEOUT, send_timeout = ROUTE_SEND_TIMEOUT, read_timeout = ROUTE_READ_TIMEOUT,
  })
end

--- The content handler of an internal mirror location. spec: scheme, host (nil: the request's
--- host), port, host_header (nil: the request's host), body (mirror-request-body), and the
--- connect/send/read timeouts in ms. The URI comes from $mirror_uri.
function _M.send(spec)
  local name = ngx.var.uri
  if ngx.var.http_x_ingress_rx_mirrored then return ngx.exit(ngx.HTTP_NO_CONTENT) end
  local host = spec.host or ngx.var.host
  local host_header = spec.host_header or ngx.var.host
  -- A mirror-host made of variables may evaluate to anything a client sent: one header line only.
  if host_header == "" or host_header:find("[%c%s]") then
    warn(name, "mirror-host evaluates to no valid Host header; copy dropped")
    return ngx.exit(ngx.HTTP_NO_CONTENT)
  end
  local data, file, length
  if spec.body then
    local err
    data, file, length, err = request_body()
    if err then warn(name, "cannot read the request body: ", err) end
  end
  local head = ngx.req.get_method() .. " " .. request_target() .. " HTTP/1.1\r\n"
    .. header_lines(host_header, length)
  start({
    name = name, host = host, port = spec.port, tls = spec.scheme == "https",
    sni = not external_peer.is_address(host) and host or nil, head = head, body = data, file = file,
    connect_timeout = spec.connect_timeout, send_timeout = spec.send_timeout, read_timeout = spec.read_timeout,
  })
  return ngx.exit(ngx.HTTP_NO_CONTENT)
end

return _M
