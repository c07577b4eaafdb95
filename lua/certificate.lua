-- Certificates served by ssl_certificate_by_lua: the SNI name (lowercased, trailing dot
-- stripped) is looked up exactly, then as the "*." wildcard of its parent domain, then the
-- default certificate (hostname key "_"); with none, the fallback certificate of nginx.conf stays.
local ssl = require("ngx.ssl")
local configuration = require("configuration")
local ngx = ngx

local certificate_data = ngx.shared.certificate_data
local certificate_servers = ngx.shared.certificate_servers

local DEFAULT_HOSTNAME = "_"

local _M = {}

-- Per-worker cache of parsed certificates by uid, flushed when the certificates marker moves.
local parsed = {}
local parsed_version = -1

local function normalize(hostname)
  if not hostname then return nil end
  hostname = hostname:lower()
  if hostname:sub(-1) == "." then hostname = hostname:sub(1, -2) end
  return hostname
end

--- The uid configured for exactly this host or its wildcard; nil otherwise (no default).
local function host_uid(hostname)
  local uid = certificate_servers:get(hostname)
  if uid then return uid end
  local parent = hostname:match("^[^.]+(%..+)$")
  if parent then return certificate_servers:get("*" .. parent) end
  return nil
end

function _M.get_pem_cert_uid(raw_hostname)
  local hostname = normalize(raw_hostname)
  if not hostname or hostname == "" then return nil end
  return host_uid(hostname)
end

function _M.get_pem_cert(raw_hostname)
  local uid = _M.get_pem_cert_uid(raw_hostname)
  return uid and certificate_data:get(uid)
end

local function parsed_certificate(uid)
  local version = configuration.get_certificates_version()
  if version ~= parsed_version then
    parsed = {}
    parsed_version = version
  end
  local entry = parsed[uid]
  if entry then return entry end
  local pem = certificate_data:get(uid)
  if not pem then return nil, "no PEM stored for certificate uid " .. uid end
  local cert, err = ssl.parse_pem_cert(pem)
  if not cert then return nil, "cannot parse certificate " .. uid .. ": " .. tostring(err) end
  local key
  key, err = ssl.parse_pem_priv_key(pem)
  if not key then return nil, "cannot parse private key of " .. uid .. ": " .. tostring(err) end
  entry = { cert = cert, key = key }
  parsed[uid] = entry
  return entry
end

function _M.call()
  local hostname = normalize(ssl.server_name())
  local uid = hostname and hostname ~= "" and host_uid(hostname) or nil
  if not uid then uid = certificate_servers:get(DEFAULT_HOSTNAME) end
  if not uid then return end -- keep the fallback certificate

  local entry, err = parsed_certificate(uid)
  if not entry then
    ngx.log(ngx.ERR, "SNI ", tostring(hostname), ": ", err, "; serving the fallback certificate")
    return
  end
  local ok
  ok, err = ssl.clear_certs()
  if ok then ok, err = ssl.set_cert(entry.cert) end
  if ok then ok, err = ssl.set_priv_key(entry.key) end
  if not ok then
    ngx.log(ngx.ERR, "SNI ", tostring(hostname), ": cannot set certificate ", uid, ": ", err)
    return ngx.exit(ngx.ERROR)
  end
end

--- Whether the request's host has its own (or a wildcard) certificate: drives ssl-redirect
--- and HSTS. Cached for the request.
function _M.configured_for_current_request()
  local ctx = ngx.ctx
  if ctx.cert_configured_for_current_request == nil then
    ctx.cert_configured_for_current_request = _M.get_pem_cert_uid(ngx.var.host) ~= nil
  end
  return ctx.cert_configured_for_current_request
end

return _M
