-- Per-request ingress logic that is not balancing: the SSL redirect in the rewrite phase, and
-- in the header filter HSTS plus any cookie the balancer queued.
local certificate = require("certificate")
local util = require("util")
local ngx = ngx
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
}

-- Set once in init_by_lua (before workers fork); read-only afterwards.
local config = DEFAULTS

function _M.set_config(new_config)
  local merged = {}
  for k, v in pairs(DEFAULTS) do merged[k] = v end
  for k, v in pairs(new_config or {}) do merged[k] = v end
  config = merged
end

function _M.get_config()
  return config
end

function _M.init_worker()
  math.randomseed(ngx.now() * 1000 + ngx.worker.pid())
end

local function request_scheme()
  if config.use_forwarded_headers then
    local forwarded = ngx.var.http_x_forwarded_proto
    if forwarded and forwarded ~= "" then return forwarded:lower() end
  end
  return ngx.var.scheme
end

local function redirect_to_https(location_config)
  if location_config.force_no_ssl_redirect then return false end
  if request_scheme() ~= "http" then return false end
  if location_config.force_ssl_redirect then return true end
  return location_config.ssl_redirect == true and certificate.configured_for_current_request()
end

function _M.rewrite(location_config)
  location_config = location_config or {}
  if not redirect_to_https(location_config) then return end

  local uri = ngx.var.request_uri
  if not location_config.preserve_trailing_slash and string_byte(uri, -1) == 47 then
    uri = uri:sub(1, -2)
  end
  local host = ngx.var.host
  local port = tonumber(config.https_port) or 443
  if port ~= 443 or location_config.use_port_in_redirects then
    host = host .. ":" .. port
  end
  return ngx.redirect("https://" .. host .. uri, config.http_redirect_code)
end

-- Set once per server block, so it also runs for denied, redirect and internal locations; it
-- only acts on the main request (not on auth subrequests).
function _M.header()
  if ngx.is_subrequest then return end
  util.flush_response_cookie()
  if config.hsts and request_scheme() == "https" and certificate.configured_for_current_request() then
    local value = "max-age=" .. config.hsts_max_age
    if config.hsts_include_subdomains then value = value .. "; includeSubDomains" end
    if config.hsts_preload then value = value .. "; preload" end
    ngx.header["Strict-Transport-Security"] = value
  end
end

return _M
