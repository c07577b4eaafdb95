-- Per-request ingress logic that is not balancing: the SSL redirect in the rewrite phase and
-- HSTS in the header filter.
local certificate = require("certificate")
local ssl = require("ngx.ssl")
local ngx = ngx
local get_tls1_version = ssl.get_tls1_version
local string_byte = string.byte

local _M = {}

local DEFAULTS = {
  http_redirect_code = 308,
  hsts = true,
  hsts_max_age = 31536000,
  hsts_include_subdomains = true,
  hsts_preload = false,
  https_port = 443,
  use_forwarded_headers = false,
  use_proxy_protocol = false,
}

-- Set once in init_by_lua (before workers fork); read-only afterwards.
local config = DEFAULTS

-- The Strict-Transport-Security value, built once from the settings (not per response).
local function hsts_value(c)
  local value = "max-age=" .. c.hsts_max_age
  if c.hsts_include_subdomains then value = value .. "; includeSubDomains" end
  if c.hsts_preload then value = value .. "; preload" end
  return value
end

local hsts_header = hsts_value(DEFAULTS)

function _M.set_config(new_config)
  local merged = {}
  for k, v in pairs(DEFAULTS) do merged[k] = v end
  for k, v in pairs(new_config or {}) do merged[k] = v end
  config = merged
  hsts_header = hsts_value(merged)
end

function _M.get_config()
  return config
end

function _M.init_worker()
  math.randomseed(ngx.now() * 1000 + ngx.worker.pid())
  certificate.init_worker()
end

-- Whether the request's connection is TLS: what $scheme tests (the connection's SSL), asked
-- without reading a variable by name (a read costs ~0.4k instructions per request).
local function over_tls()
  return get_tls1_version() ~= nil
end

-- The scheme the client used, as ingress-nginx's $pass_access_scheme: X-Forwarded-Proto with
-- use-forwarded-headers, https for a PROXY header naming port 443 (nginx.conf's maps).
local function request_scheme()
  if config.use_forwarded_headers or config.use_proxy_protocol then return ngx.var.pass_access_scheme end
  return over_tls() and "https" or "http"
end

-- A location's redirect settings, written in the template as a string of words so that a
-- request allocates nothing: "ssl-redirect", "force-ssl-redirect", "preserve-trailing-slash",
-- "use-port-in-redirects". Each distinct string is parsed once per worker.
local location_configs = {}

local LOCATION_FLAGS = {
  ["ssl-redirect"] = "ssl_redirect",
  ["force-ssl-redirect"] = "force_ssl_redirect",
  ["preserve-trailing-slash"] = "preserve_trailing_slash",
  ["use-port-in-redirects"] = "use_port_in_redirects",
}

local function location_config(flags)
  local parsed = location_configs[flags]
  if parsed then return parsed end
  parsed = {}
  for word in flags:gmatch("%S+") do
    local key = LOCATION_FLAGS[word]
    if key then
      parsed[key] = true
    else
      ngx.log(ngx.ERR, "lua_ingress.rewrite: unknown flag \"", word, "\" ignored")
    end
  end
  location_configs[flags] = parsed
  return parsed
end

-- With use-forwarded-headers the redirect names the host X-Forwarded-Host gives, as ingress-nginx
-- does: the first of a list, without a port. A value that is not a host name is not followed.
local function forwarded_host()
  local forwarded = ngx.var.http_x_forwarded_host
  if not forwarded then return nil end
  local name = forwarded:match("^[^,:]*")
  if name == "" or name:find("[^%w%.%-_]") then return nil end
  return name
end

--- The SSL redirect. The template calls it only for locations that have ssl-redirect or
--- force-ssl-redirect; `flags` as described at location_configs. `host` is the request's $host
--- when the template knows it (a server with one exact name), saving the variable read.
function _M.rewrite(flags, host)
  local location = location_config(flags or "")
  if location.force_ssl_redirect then
    if request_scheme() ~= "http" then return end
  elseif location.ssl_redirect then
    -- The certificate first: without one (a table lookup) the scheme is not needed.
    host = host or ngx.var.host
    if not certificate.configured_for_host(host) or request_scheme() ~= "http" then return end
  else
    return
  end

  host = config.use_forwarded_headers and forwarded_host() or host or ngx.var.host
  local uri = ngx.var.request_uri
  if not location.preserve_trailing_slash and string_byte(uri, -1) == 47 then
    uri = uri:sub(1, -2)
  end
  local port = tonumber(config.https_port) or 443
  if port ~= 443 or location.use_port_in_redirects then
    host = host .. ":" .. port
  end
  return ngx.redirect("https://" .. host .. uri, config.http_redirect_code)
end

--- The Location of a from-to-www-redirect server, as ingress-nginx builds it: the request's
--- scheme and server port (X-Forwarded-Proto/-Port when trusted), the other host name, and the
--- request URI without one trailing slash.
function _M.www_redirect_target(host)
  local uri = ngx.var.request_uri
  if string_byte(uri, -1) == 47 then uri = uri:sub(1, -2) end
  local scheme = ngx.var.scheme
  local port = ngx.var.server_port
  if config.use_forwarded_headers then
    local forwarded = ngx.var.http_x_forwarded_proto
    if forwarded and forwarded ~= "" then scheme = forwarded end
    forwarded = ngx.var.http_x_forwarded_port
    if forwarded and forwarded ~= "" then port = forwarded end
  end
  return scheme .. "://" .. host .. ":" .. port .. uri
end

-- Set once per server block, so it also runs for denied, redirect and internal locations; it
-- only acts on the main request (not on auth subrequests). `host` as for rewrite().
function _M.header(host)
  if not config.hsts then return end
  -- The connection's scheme, not X-Forwarded-Proto: ingress-nginx's header() reads $scheme.
  -- First, so that a plain-HTTP answer reads no $host either.
  if not over_tls() or ngx.is_subrequest then return end
  if not certificate.configured_for_host(host or ngx.var.host) then return end
  ngx.header["Strict-Transport-Security"] = hsts_header
end

return _M
