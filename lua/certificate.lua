-- Certificates served by ssl_certificate_by_lua: the SNI name (lowercased, trailing dot
-- stripped) is looked up exactly, then as the "*." wildcard of its parent domain, then the
-- default certificate (hostname key "_"); with none, the fallback certificate of nginx.conf stays.
local ssl = require("ngx.ssl")
local configuration = require("configuration")
local freshness = require("freshness")
local ocsp_stapling = require("ocsp_stapling")
local gateway_frontend = require("gateway_frontend")
local ngx = ngx

local certificate_data = ngx.shared.certificate_data
local certificate_servers = ngx.shared.certificate_servers

local DEFAULT_HOSTNAME = "_"
local GATEWAY_CATCH_ALL = "_gateway" -- src/model/core/payload.ts
local FALLBACK_UID = configuration.FALLBACK_UID

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
--- `port` (":8443"): among the hosts of that Gateway listener port (keys `host:port`).
local function host_uid(hostname, port)
  local uid = certificate_servers:get(port and hostname .. port or hostname)
  if uid then return uid end
  local parent = hostname:match("^[^.]+(%..+)$")
  if parent then return certificate_servers:get(port and "*" .. parent .. port or "*" .. parent) end
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
  entry = { cert = cert, key = key, pem = pem }
  parsed[uid] = entry
  return entry
end

--- The certificate chain as DER, for OCSP; made on first use.
local function der_chain(uid, entry)
  if entry.der == nil then
    local der, err = ssl.cert_pem_to_der(entry.pem)
    if not der then ngx.log(ngx.ERR, "certificate ", uid, ": cannot convert the chain to DER: ", err) end
    entry.der = der or false
  end
  return entry.der
end

--- `port` (":8443"): in the server of a Gateway HTTPS listener port other than 443, whose hosts and listeners only are looked up.
function _M.call(port)
  local hostname = normalize(ssl.server_name())
  gateway_frontend.ssl(hostname, port)
  local uid = hostname and hostname ~= "" and host_uid(hostname, port) or nil
  -- A name no host has, taken by a Gateway's HTTPS listener without hostname: that listener's certificate.
  if not uid and gateway_frontend.catch_all(hostname, port) then uid = certificate_servers:get(port and GATEWAY_CATCH_ALL .. port or GATEWAY_CATCH_ALL) end
  if not uid then uid = certificate_servers:get(DEFAULT_HOSTNAME) end
  -- "fallback": a host with TLS whose Secret is unusable (see FALLBACK_UID in src/model/core/payload.ts).
  if not uid or uid == FALLBACK_UID then return end -- keep the fallback certificate

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
  if ocsp_stapling.enabled then
    local der = der_chain(uid, entry)
    if der then ocsp_stapling.staple(uid, der) end
  end
end

-- Per-worker answers of configured_for_host, dropped when the certificates marker moves (seen
-- by the first request after a post, freshness.lua, or a timer) and when they grow past a
-- bound: any Host header reaching the default server becomes a key.
local REFRESH_INTERVAL = 0.1 -- seconds; the SNI callback above reads the dicts directly
local MAX_CONFIGURED_HOSTS = 10000
local configured_hosts = {}
local configured_hosts_count = 0
local configured_hosts_version = nil

local function refresh_configured_hosts(premature)
  if premature then return end
  local version = configuration.get_certificates_version()
  if version ~= configured_hosts_version then
    configured_hosts = {}
    configured_hosts_count = 0
    configured_hosts_version = version
  end
end

function _M.init_worker()
  refresh_configured_hosts()
  freshness.on_change(refresh_configured_hosts)
  local ok, err = ngx.timer.every(REFRESH_INTERVAL, refresh_configured_hosts)
  if not ok then
    ngx.log(ngx.ERR, "cannot start the certificates refresh timer: ", err)
  end
end

--- Whether `host` (the request's $host) has its own or a wildcard certificate: drives
--- ssl-redirect and HSTS. A change posted to /configuration/servers counts within 0.1 s.
function _M.configured_for_host(host)
  if not host then return false end
  local configured = configured_hosts[host]
  if configured == nil then
    configured = _M.get_pem_cert_uid(host) ~= nil
    if configured_hosts_count >= MAX_CONFIGURED_HOSTS then
      configured_hosts = {}
      configured_hosts_count = 0
    end
    configured_hosts[host] = configured
    configured_hosts_count = configured_hosts_count + 1
  end
  return configured
end

return _M
