-- The Gateway API's HTTPS listeners (src/model/gateway/frontend-tls.ts; those of a port other than
-- 443 are looked up among that port's only, in its own server): which
-- listener a TLS name (the SNI) or a Host belongs to, and that listener's client certificate
-- validation (spec.tls.frontend). In the handshake, a listener with a validation asks for a client
-- certificate against its CAs (ngx.ssl.verify_client, no reload); one without a valid CA refuses
-- the handshake. Per request, a Host whose listener is not the one its connection's SNI chose is
-- answered 421 (a coalesced HTTP/2 connection, or a Host unlike the SNI), and a listener in
-- AllowValidOnly mode closes a request whose certificate did not verify. A host served through
-- HTTPS listeners only, whose listener validates clients, is not served on plain HTTP (404). Names of Ingress hosts
-- (group -1) belong to no listener: Gateway validation never reaches them.
local ssl = require("ngx.ssl")
local cjson = require("cjson.safe")
local configuration = require("configuration")
local freshness = require("freshness")
local ngx = ngx
local string_sub, string_find = string.sub, string.find

local _M = {}

local NO_GROUP = -1
local MAX_VERIFY_DEPTH = 10

-- This worker's decoded table, for the certificates version it was read at; nil: no listener.
local table_version = -1
local names, policies, tls_only

-- Brings the table up to the posted one (one shared-dict read).
local function current()
  local version = configuration.get_certificates_version()
  if version ~= table_version then
    table_version = version
    names, policies, tls_only = nil, nil, {}
    local raw = configuration.get_frontends()
    local t = raw and cjson.decode(raw)
    if type(t) == "table" then
      names, policies = t.names, {}
      if type(t.tlsOnly) == "table" then
        for _, h in ipairs(t.tlsOnly) do tls_only[h] = true end
      end
      for i, p in ipairs(t.policies) do
        -- index from 0 as posted; cjson.null for a listener without validation
        if p ~= cjson.null then policies[i - 1] = { ca = p.ca ~= cjson.null and p.ca or nil, insecure = p.insecure } end
      end
    end
  end
  return names
end

-- Per request the table is read again only after a post (freshness.lua: the router's one
-- shared-dict read per request has run before check()).
local stale = true
freshness.on_change(function() stale = true end)

local function current_for_request()
  if stale then
    stale = false
    current()
  end
  return names
end

--- The listener group of a lower-cased name: itself, then each wildcard above it (an Ingress
--- wildcard only one label up: it covers one label), then the listener without a hostname.
--- `port` (":8443"): among the listeners of that port other than 443 (keys `name:port`).
local function group_of(name, port)
  local g = names[port and name .. port or name]
  if g then return g end
  local dot = string_find(name, ".", 1, true)
  local first = true
  while dot do
    g = names[port and "*" .. string_sub(name, dot) .. port or "*" .. string_sub(name, dot)]
    if g and (g ~= NO_GROUP or first) then return g end
    first = false
    dot = string_find(name, ".", dot + 1, true)
  end
  return names[port or ""]
end

local function normalize(name)
  name = name:lower()
  if string_sub(name, -1) == "." then name = string_sub(name, 1, -2) end
  return name
end

-- A group's parsed CA certificates, per worker and table version.
local parsed_ca = {}
local parsed_ca_version = -1

local function ca_of(group, policy)
  if parsed_ca_version ~= table_version then
    parsed_ca, parsed_ca_version = {}, table_version
  end
  local ca = parsed_ca[group]
  if ca == nil then
    local err
    ca, err = ssl.parse_pem_cert(policy.ca)
    if not ca then
      ngx.log(ngx.ERR, "gateway frontend: cannot parse the CA certificates of listener group ", group, ": ", err)
      ca = false
    end
    parsed_ca[group] = ca
  end
  return ca
end

--- Whether the TLS name (nil: none) belongs to the listener without hostname (of port `port`, ":8443", when given).
function _M.catch_all(hostname, port)
  if not current() then return false end
  local all = names[port or ""]
  return all ~= nil and all ~= NO_GROUP and group_of(hostname and hostname ~= "" and hostname or "", port) == all
end

--- In ssl_certificate_by_lua: the SNI's listener's validation (among port `port`'s, ":8443", when given).
function _M.ssl(hostname, port)
  if not current() then return end
  local g = group_of(hostname and hostname ~= "" and hostname or "", port)
  local policy = g and policies[g]
  if not policy then return end
  local ca = policy.ca and ca_of(g, policy)
  if not ca then
    -- No valid CA (or none that parses): refused rather than served without validation.
    return ngx.exit(ngx.ERROR)
  end
  local ok, err = ssl.verify_client(ca, MAX_VERIFY_DEPTH)
  if not ok then
    ngx.log(ngx.ERR, "gateway frontend: cannot ask for a client certificate: ", err)
    return ngx.exit(ngx.ERROR)
  end
end

--- Per request, once the router looked the request up (`host`: $host; `port`: ":8443" in the server
--- of a Gateway listener port other than 80 and 443). Nothing to do without a listener table or on plain HTTP.
function _M.check(var, host, port)
  if not current_for_request() then return end
  local sni = var.ssl_server_name
  if sni == nil then
    if var.https ~= "on" then
      -- A listener port's plain HTTP server answers only the hosts of its own HTTP listeners.
      if port then return end
      -- Plain HTTP: a host no HTTP listener serves is not opened there when its listener validates clients.
      if tls_only[host] then
        local g = group_of(host)
        if g and policies[g] then return ngx.exit(ngx.HTTP_NOT_FOUND) end
      end
      return
    end
    sni = ""
  else
    sni = normalize(sni)
  end
  local hg = group_of(host, port) or NO_GROUP
  if sni ~= host then
    local sg = group_of(sni, port) or NO_GROUP
    if sg ~= hg then return ngx.exit(421) end
  end
  local policy = policies[hg]
  if policy and not policy.insecure and var.ssl_client_verify ~= "SUCCESS" then
    -- Reached only when the handshake did not refuse it (no certificate, or one that failed).
    return ngx.exit(444)
  end
end

return _M
