-- The shapes the controller POSTs to the configuration endpoint (src/model/core/payload.ts): a body of
-- any other shape is refused with the first problem found, before anything is stored, so the
-- running balancers and certificates keep what they had. Unknown fields are allowed (newer
-- controllers may send more); JSON null stands for an absent optional field.
local cjson = require("cjson.safe")
local route_access = require("route_access")
local null = cjson.null
local type, pairs, ipairs, tostring, floor = type, pairs, ipairs, tostring, math.floor

local _M = {}

local MAX_NAME = 1024

local function absent(v)
  return v == nil or v == null
end

--- A JSON array as cjson decodes it: keys 1..n and nothing else.
local function is_array(t)
  if type(t) ~= "table" then return false end
  local n, count = #t, 0
  for k in pairs(t) do
    if type(k) ~= "number" or k < 1 or k > n or floor(k) ~= k then return false end
    count = count + 1
  end
  return count == n
end

local function is_object(t)
  if type(t) ~= "table" then return false end
  for k in pairs(t) do
    if type(k) ~= "string" then return false end
  end
  return true
end

local function valid_port(p)
  if type(p) == "string" then
    if not p:match("^%d%d?%d?%d?%d?$") then return false end
    p = tonumber(p)
  end
  return type(p) == "number" and floor(p) == p and p >= 1 and p <= 65535
end

local function optional(value, check, what)
  if absent(value) then return nil end
  return check(value, what)
end

local function object_check(v, what)
  if not is_object(v) then return what .. " must be a JSON object" end
end

local function string_check(v, what)
  if type(v) ~= "string" then return what .. " must be a string" end
end

local function boolean_check(v, what)
  if type(v) ~= "boolean" then return what .. " must be true or false" end
end

local function endpoint_problem(e, where)
  if not is_object(e) then return where .. " must be a JSON object" end
  if type(e.address) ~= "string" or e.address == "" or #e.address > 255 then
    return where .. ".address must be a non-empty string"
  end
  if not valid_port(e.port) then return where .. ".port must be a port number (1-65535)" end
end

local function service_problem(s, where)
  if not is_object(s) then return where .. " must be a JSON object or null" end
  if not absent(s.spec) then
    if not is_object(s.spec) then return where .. ".spec must be a JSON object" end
    local p = optional(s.spec.type, string_check, where .. ".spec.type")
      or optional(s.spec.externalName, string_check, where .. ".spec.externalName")
    if p then return p end
  end
  if not absent(s.metadata) and not is_object(s.metadata) then return where .. ".metadata must be a JSON object" end
end

local function traffic_shaping_problem(t, where)
  if not is_object(t) then return where .. " must be a JSON object" end
  for _, key in ipairs({ "weight", "weightTotal" }) do
    local v = t[key]
    if not absent(v) and (type(v) ~= "number" or v < 0) then return where .. "." .. key .. " must be a number >= 0" end
  end
  for _, key in ipairs({ "header", "headerValue", "headerPattern", "cookie" }) do
    local p = optional(t[key], string_check, where .. "." .. key)
    if p then return p end
  end
end

local function backend_problem(b, where)
  if not is_object(b) then return where .. " must be a JSON object" end
  if type(b.name) ~= "string" or b.name == "" or #b.name > MAX_NAME then
    return where .. ".name must be a non-empty string"
  end
  where = where .. " (" .. b.name .. ")"
  if not absent(b.endpoints) then
    if not is_array(b.endpoints) then return where .. ".endpoints must be a JSON array" end
    for i, e in ipairs(b.endpoints) do
      local p = endpoint_problem(e, where .. ".endpoints[" .. (i - 1) .. "]")
      if p then return p end
    end
  end
  if not absent(b.port) and type(b.port) ~= "string" and type(b.port) ~= "number" then
    return where .. ".port must be a string or a number"
  end
  if not absent(b.alternativeBackends) then
    if not is_array(b.alternativeBackends) then return where .. ".alternativeBackends must be a JSON array" end
    for i, name in ipairs(b.alternativeBackends) do
      if type(name) ~= "string" then return where .. ".alternativeBackends[" .. (i - 1) .. "] must be a string" end
    end
  end
  return optional(b.service, service_problem, where .. ".service")
    or optional(b.sessionAffinityConfig, object_check, where .. ".sessionAffinityConfig")
    or optional(b.upstreamHashByConfig, object_check, where .. ".upstreamHashByConfig")
    or optional(b.trafficShapingPolicy, traffic_shaping_problem, where .. ".trafficShapingPolicy")
    or optional(b.sslPassthrough, boolean_check, where .. ".sslPassthrough")
    or optional(b.noServer, boolean_check, where .. ".noServer")
    or optional(b["load-balance"], string_check, where .. ".load-balance")
end

--- The problem with a decoded backends list, or nil.
function _M.backends_problem(list)
  if not is_array(list) then return "expected a JSON array of backends" end
  local seen = {}
  for i, b in ipairs(list) do
    local p = backend_problem(b, "[" .. (i - 1) .. "]")
    if p then return p end
    if seen[b.name] then return "[" .. (i - 1) .. "]: backend " .. b.name .. " appears twice" end
    seen[b.name] = true
  end
  return nil
end

-- The most bytes a posted table or list id may have.
local MAX_TABLE_ID = 128

--- The problem with the frame of a decoded backends object (`{"base","id","backends","deleted"}`:
--- a whole list without `base`, a change to list `base` with it), or nil; its backends are
--- checked by backends_problem.
function _M.backends_update_problem(update)
  if not is_object(update) then return "expected a JSON array of backends or an object" end
  for _, key in ipairs({ "base", "id" }) do
    local v = update[key]
    if not absent(v) and (type(v) ~= "string" or v == "" or #v > MAX_TABLE_ID) then
      return key .. " must be a non-empty string of at most " .. MAX_TABLE_ID .. " bytes"
    end
  end
  if not is_array(update.backends) then return "backends must be a JSON array" end
  if not absent(update.deleted) and not is_array(update.deleted) then return "deleted must be a JSON array" end
  return nil
end

--- The problem with `deleted` (names of backends gone) beside the backends `list` of a change.
function _M.backends_deleted_problem(list, deleted, base)
  if #deleted > 0 and absent(base) then return "deleted needs base (a whole list names no deletions)" end
  local changed = {}
  for _, b in ipairs(list) do changed[b.name] = true end
  for i, name in ipairs(deleted) do
    if type(name) ~= "string" or name == "" or #name > MAX_NAME then
      return "deleted[" .. (i - 1) .. "] must be a non-empty string"
    end
    if changed[name] then return "backend " .. name .. " is both changed and deleted" end
  end
  return nil
end

local function valid_hostname(h)
  return type(h) == "string" and #h > 0 and #h <= 253 and h:match("^[%w%.%-%*_]+$") ~= nil
end

-- A route table's host: a host name, or `host:port` for a Gateway listener port other than 80
-- and 443 (lua/router.lua looks those up only in that port's server).
local function valid_route_host(h)
  if valid_hostname(h) then return true end
  if type(h) ~= "string" then return false end
  local name, port = h:match("^(.+):(%d%d?%d?%d?%d?)$")
  return name ~= nil and valid_hostname(name) and tonumber(port) >= 1 and tonumber(port) <= 65535
end

--- The problem with a decoded servers payload, or nil. `known(uid)` says whether a certificate
--- uid is stored already (a payload may name one it does not carry again).
function _M.servers_problem(payload, empty_uid, known)
  if not is_object(payload) then return "expected a JSON object" end
  local certificates = absent(payload.certificates) and {} or payload.certificates
  local servers = absent(payload.servers) and {} or payload.servers
  if not is_object(certificates) or not is_object(servers) then
    return "certificates and servers must be JSON objects"
  end
  if not absent(payload.complete) and type(payload.complete) ~= "boolean" then
    return "complete must be a boolean"
  end
  for uid, pem in pairs(certificates) do
    if type(uid) ~= "string" or uid == "" or uid == empty_uid or type(pem) ~= "string" then
      return "certificates must map uid to PEM strings"
    end
    if not pem:find("-----BEGIN CERTIFICATE-----", 1, true) or not pem:find("PRIVATE KEY-----", 1, true) then
      return "certificate " .. uid .. " is not a PEM certificate followed by its private key"
    end
  end
  if not absent(payload.frontends) then
    local problem = _M.frontends_problem(payload.frontends)
    if problem then return problem end
  end
  for hostname, uid in pairs(servers) do
    -- `host:port`: a host of a Gateway HTTPS listener port other than 443 (lua/certificate.lua).
    if not valid_route_host(hostname) or type(uid) ~= "string" then
      return "servers must map host names to uid strings"
    end
    if uid ~= empty_uid and certificates[uid] == nil and not known(uid) then
      return "server " .. hostname .. " names certificate " .. uid .. ", which is neither posted nor stored"
    end
  end
  return nil
end

local MAX_FRONTEND_POLICIES = 65536

--- The problem with the Gateway API's HTTPS listener table (src/model/gateway/frontend-tls.ts),
--- or nil: `names` maps a host name ("" or "*.x" too; `:port` appended off 443) to -1 (an Ingress host) or a policy's
--- index from 0; each policy is null (no validation) or { ca = PEM or null, insecure = boolean }.
function _M.frontends_problem(f)
  if not is_object(f) or not is_object(f.names) or not is_array(f.policies) then
    return "frontends must be an object with names (an object) and policies (an array)"
  end
  local n = #f.policies
  if n > MAX_FRONTEND_POLICIES then return "frontends: more than " .. MAX_FRONTEND_POLICIES .. " policies" end
  for name, i in pairs(f.names) do
    -- `name:port` and `:port`: the listeners of a port other than 443.
    local named = name == "" or valid_route_host(name) or valid_route_host("_" .. name)
    if not named or type(i) ~= "number" or floor(i) ~= i or i < -1 or i >= n then
      return "frontends: names must map host names to -1 or a policy index"
    end
  end
  if not absent(f.tlsOnly) then
    if not is_array(f.tlsOnly) then return "frontends: tlsOnly must be an array of host names" end
    for _, h in ipairs(f.tlsOnly) do
      if not valid_hostname(h) then return "frontends: tlsOnly must be an array of host names" end
    end
  end
  for i = 1, n do
    local p = f.policies[i]
    if not absent(p) then
      if not is_object(p) or type(p.insecure) ~= "boolean" then
        return "frontends: policy " .. (i - 1) .. " must be null or an object with insecure (boolean)"
      end
      if not absent(p.ca) and (type(p.ca) ~= "string" or not p.ca:find("-----BEGIN CERTIFICATE-----", 1, true)) then
        return "frontends: policy " .. (i - 1) .. ": ca must be null or PEM certificates"
      end
    end
  end
  return nil
end

--- The problem with a decoded general document, or nil: an object of scalar settings.
function _M.general_problem(doc)
  if not is_object(doc) then return "expected a JSON object" end
  for k, v in pairs(doc) do
    local t = type(v)
    if t ~= "string" and t ~= "number" and t ~= "boolean" then
      return "setting " .. tostring(k) .. " must be a string, number or boolean"
    end
  end
  local pods = doc.controllerPodsCount
  if pods ~= nil and (type(pods) ~= "number" or pods < 0 or floor(pods) ~= pods) then
    return "controllerPodsCount must be a whole number >= 0"
  end
  return nil
end

-- Bounds of a route table (src/model/ingress/dynamic-routes.ts keeps bigger hosts static): a hostile
-- table must not make a worker spend unbounded memory or time per request.
_M.MAX_ROUTE_HOSTS = 100000
_M.MAX_HOST_ROUTES = 1000
_M.MAX_HOST_REGEXES = 100
_M.MAX_ROUTE_STRING = 4096

local ROUTE_MATCHES = { exact = true, prefix = true, regex = true }
local ROUTE_STRINGS = { "pattern", "namespace", "ingress", "service", "port", "path", "backend", "fallback", "redirect" }

-- The URI and redirect settings of a route (src/model/core/route-uri.ts): their values reach response
-- and upstream headers, so no control byte; a redirect names only the variables a location's
-- `return` may use; a rewrite target holds URI bytes and captures $1-$9 only.
local REDIRECT_CODES = { [301] = true, [302] = true, [303] = true, [307] = true, [308] = true }
local MAX_REDIRECT_PARTS = 64
local REDIRECT_VARIABLES = {
  host = true, http_host = true, scheme = true, request_uri = true, uri = true, args = true, is_args = true,
  server_port = true, remote_addr = true, request_method = true, request_id = true, remote_user = true,
  server_addr = true, best_http_host = true, pass_access_scheme = true, pass_server_port = true,
  redirect_http_host = true, redirect_best_http_host = true,
}

local function header_value_problem(v, what)
  if type(v) ~= "string" then return what .. " must be a string" end
  if #v > _M.MAX_ROUTE_STRING then return what .. " is longer than " .. _M.MAX_ROUTE_STRING .. " bytes" end
  if v:find("[%z\1-\31\127]") then return what .. " must not hold control characters" end
end

local function redirect_variable(name)
  return type(name) == "string" and (REDIRECT_VARIABLES[name] or name:find("^arg_[a-z0-9_]+$")
    or name:find("^http_[a-z0-9_]+$") or name:find("^cookie_[a-z0-9_]+$")) ~= nil
end

-- Literals and variable names, alternating, starting and ending with a literal.
local function parts_problem(parts, what)
  if not is_array(parts) or #parts % 2 ~= 1 or #parts > MAX_REDIRECT_PARTS then
    return what .. " must be an odd number (at most " .. MAX_REDIRECT_PARTS .. ") of strings"
  end
  for i, p in ipairs(parts) do
    if i % 2 == 0 then
      if not redirect_variable(p) then return what .. "[" .. (i - 1) .. "] is not a variable a redirect may use" end
    else
      local problem = header_value_problem(p, what .. "[" .. (i - 1) .. "]")
      if problem then return problem end
    end
  end
end

local function uri_settings_problem(e, where)
  local r = e["return"]
  if not absent(r) then
    if not is_object(r) then return where .. ".return must be a JSON object" end
    if not REDIRECT_CODES[r.code] then return where .. ".return.code must be 301, 302, 303, 307 or 308" end
    if type(r.absolute) ~= "boolean" or type(r.port) ~= "boolean" then return where .. ".return: absolute and port must be true or false" end
    local problem = parts_problem(r.parts, where .. ".return.parts")
    if problem then return problem end
  end
  if not absent(e.upstreamVhost) then
    local problem = parts_problem(e.upstreamVhost, where .. ".upstreamVhost")
    if problem then return problem end
  end
  local root = e.appRoot
  if not absent(root) and (type(root) ~= "string" or #root > _M.MAX_ROUTE_STRING or not root:find("^/[^%s%c\"'\\<>%^`{|}%$]*$")) then
    return where .. ".appRoot must be a path without white space, quotes, <>^`{|}$ or control characters"
  end
  local rw = e.rewrite
  if not absent(rw) then
    if not is_object(rw) or type(rw.regex) ~= "string" or type(rw.target) ~= "string" then return where .. ".rewrite must be an object with regex and target strings" end
    if #rw.regex > _M.MAX_ROUTE_STRING or #rw.target > _M.MAX_ROUTE_STRING then return where .. ".rewrite is longer than " .. _M.MAX_ROUTE_STRING .. " bytes" end
    if rw.regex:find("[%s%c]") then return where .. ".rewrite.regex must not hold white space" end
    if rw.target == "" or not rw.target:find("^[%w%-%._~/:%?=&%%%+,@!%*%(%)%$]+$") then return where .. ".rewrite.target must hold only URI characters and captures" end
  end
  for _, k in ipairs({ "xForwardedPrefix", "connection" }) do
    if not absent(e[k]) then
      local problem = header_value_problem(e[k], where .. "." .. k)
      if problem then return problem end
    end
  end
  return nil
end

_M.MAX_ROUTE_SOURCE_RANGES = 5000 -- per list: each is tried per request (src/model/core/route-settings.ts)
_M.MAX_ROUTE_TIMEOUT = 86400 -- seconds, the proxy group's bound
_M.MAX_ROUTE_TRIES = 100

local function whole(v, max)
  return type(v) == "number" and v >= 0 and v <= max and floor(v) == v
end

-- A route timeout: seconds, with the milliseconds of an HTTPRoute's (src/model/gateway/timeouts.ts).
-- 0: the http level's; else at least a millisecond (set_timeouts takes milliseconds).
local function seconds(v)
  if type(v) ~= "number" or v < 0 or v > _M.MAX_ROUTE_TIMEOUT then return false end
  return v == 0 or v >= 0.001
end

_M.MAX_ROUTE_HEADERS = 100

-- Response headers as [name, value] pairs: a token and a value without control characters
-- (a CR or LF would start another header).
local function header_list_problem(list, where)
  if absent(list) then return nil end
  if not is_array(list) or #list > _M.MAX_ROUTE_HEADERS then return where .. " must be an array of at most " .. _M.MAX_ROUTE_HEADERS .. " headers" end
  for i, h in ipairs(list) do
    local name, value = type(h) == "table" and h[1], type(h) == "table" and h[2]
    if not is_array(h) or #h ~= 2 or type(name) ~= "string" or #name > 256 or not name:match("^[!#$%%&'*+.^_`|~%w-]+$")
       or header_value_problem(value, "") then
      return where .. " [" .. (i - 1) .. "] must be a header name (a token) and a value without control characters"
    end
  end
  return nil
end

-- The per-route settings (lua/route_upstream.lua, lua/route_access.lua, lua/route_headers.lua,
-- lua/route_cors.lua): absent, or exactly what the model sends.
local function route_settings_problem(e, where)
  local t = e.timeouts
  if not absent(t) then
    if not is_array(t) or #t ~= 3 or not (seconds(t[1]) and seconds(t[2]) and seconds(t[3])) then
      return where .. ".timeouts must be 3 times in seconds from 0 to " .. _M.MAX_ROUTE_TIMEOUT
    end
  end
  local trace = e.trace
  if not absent(trace) then
    if not is_object(trace) or type(trace.trust) ~= "boolean" or type(trace.name) ~= "string"
       or #trace.name > _M.MAX_ROUTE_STRING or trace.name:find("%c") then
      return where .. ".trace must be an object with a boolean trust and a span name without control characters"
    end
  end
  if not absent(e.tries) and not whole(e.tries, _M.MAX_ROUTE_TRIES) then return where .. ".tries must be a whole number from 0 to " .. _M.MAX_ROUTE_TRIES end
  local problem = header_list_problem(e.headers, where .. ".headers")
  if problem then return problem end
  local cors = e.cors
  if not absent(cors) then
    if not is_object(cors) or type(cors.origin) ~= "string" or #cors.origin > _M.MAX_ROUTE_STRING then
      return where .. ".cors must be an object with an origin pattern string"
    end
    problem = header_list_problem(cors.headers, where .. ".cors.headers")
    if problem then return problem end
    if not (absent(cors.echoMethods) or cors.echoMethods == true) or not (absent(cors.echoHeaders) or cors.echoHeaders == true) then
      return where .. ".cors.echoMethods and .echoHeaders must be absent or true"
    end
  end
  for _, k in ipairs({ "deny", "allow" }) do
    local list = e[k]
    if not absent(list) then
      if not is_array(list) or #list > _M.MAX_ROUTE_SOURCE_RANGES then
        return where .. "." .. k .. " must be an array of at most " .. _M.MAX_ROUTE_SOURCE_RANGES .. " CIDRs"
      end
      for _, c in ipairs(list) do
        if type(c) ~= "string" or #c > 64 or not route_access.parse_cidr(c) then
          return where .. "." .. k .. ": " .. tostring(c):sub(1, 100) .. " is not an IP address or CIDR"
        end
      end
    end
  end
  return nil
end

_M.MAX_ROUTE_CONDITIONS = 16
local METHODS = { GET = true, HEAD = true, POST = true, PUT = true, DELETE = true, CONNECT = true, OPTIONS = true, TRACE = true, PATCH = true }
local VALUE_MATCH_TYPES = { Exact = true, RegularExpression = true }

-- Header or query parameter tests: [{ name, type, value }], strings without control characters.
local function value_matches_problem(list, where)
  if not is_array(list) or #list > _M.MAX_ROUTE_CONDITIONS then return where .. " must be an array of at most " .. _M.MAX_ROUTE_CONDITIONS .. " matches" end
  for i, m in ipairs(list) do
    local at = where .. "[" .. i .. "]"
    if not is_object(m) or not VALUE_MATCH_TYPES[m.type] then return at .. " must be an object with type Exact or RegularExpression" end
    if type(m.name) ~= "string" or #m.name == 0 or #m.name > 256 or m.name:find("[%z\1-\32\127]") then return at .. ".name must be 1 to 256 bytes without control characters or spaces" end
    if type(m.value) ~= "string" or #m.value > 4096 or m.value:find("[%z\1-\31\127]") then return at .. ".value must be at most 4096 bytes without control characters" end
  end
  return nil
end

-- The route's conditions (lua/route_match.lua), absent or JSON null when it has none.
local function conditions_problem(w, where)
  if absent(w) then return nil end
  if not is_object(w) then return where .. " must be a JSON object" end
  if type(w.method) ~= "string" or (w.method ~= "" and not METHODS[w.method]) then return where .. ".method must be '' or an HTTP method" end
  return value_matches_problem(w.headers, where .. ".headers") or value_matches_problem(w.query, where .. ".query")
end

local RESERVED_HEADERS = { host = true, ["content-length"] = true, ["transfer-encoding"] = true, connection = true, ["keep-alive"] = true, ["proxy-connection"] = true, te = true, trailer = true, upgrade = true }

local function edit_name_problem(name, where)
  if type(name) ~= "string" or #name == 0 or #name > 256 or name:find("[^%w!#$%%&'*+%-.^_`|~]") then return where .. " must be a header name" end
  if RESERVED_HEADERS[name:lower()] then return where .. " names a header filters do not edit" end
  return nil
end

-- Header edits: { set: [{name, value}], add: [{name, value}], remove: [name] }.
local function header_edits_problem(h, where)
  if absent(h) then return nil end
  if not is_object(h) then return where .. " must be a JSON object" end
  for _, k in ipairs({ "set", "add" }) do
    local list = h[k]
    if not is_array(list) or #list > _M.MAX_ROUTE_CONDITIONS then return where .. "." .. k .. " must be an array of at most " .. _M.MAX_ROUTE_CONDITIONS end
    for i, x in ipairs(list) do
      local at = where .. "." .. k .. "[" .. i .. "]"
      if not is_object(x) then return at .. " must be a JSON object" end
      local problem = edit_name_problem(x.name, at .. ".name")
      if problem then return problem end
      if type(x.value) ~= "string" or #x.value > 4096 or x.value:find("[%z\1-\31\127]") then return at .. ".value must be at most 4096 bytes without control characters" end
    end
  end
  if not is_array(h.remove) or #h.remove > _M.MAX_ROUTE_CONDITIONS then return where .. ".remove must be an array of at most " .. _M.MAX_ROUTE_CONDITIONS end
  for i, name in ipairs(h.remove) do
    local problem = edit_name_problem(name, where .. ".remove[" .. i .. "]")
    if problem then return problem end
  end
  return nil
end

local function path_replacement_problem(p, where)
  if absent(p) then return nil end
  if not is_object(p) or (p.type ~= "ReplaceFullPath" and p.type ~= "ReplacePrefixMatch") then return where .. " must be an object with type ReplaceFullPath or ReplacePrefixMatch" end
  if type(p.value) ~= "string" or p.value:byte(1) ~= 47 or #p.value > _M.MAX_ROUTE_STRING or p.value:find("[%z\1-\32\127]") then return where .. ".value must be a path" end
  return nil
end

local REDIRECT_CODES = { [301] = true, [302] = true, [303] = true, [307] = true, [308] = true }

-- HTTPRoute filters (lua/route_filters.lua).
local function filters_problem(f, where)
  if absent(f) then return nil end
  if not is_object(f) then return where .. " must be a JSON object" end
  local problem = header_edits_problem(f.requestHeaders, where .. ".requestHeaders") or header_edits_problem(f.responseHeaders, where .. ".responseHeaders")
  if problem then return problem end
  local r = f.redirect
  if not absent(r) then
    if not is_object(r) then return where .. ".redirect must be a JSON object" end
    if r.scheme ~= "" and r.scheme ~= "http" and r.scheme ~= "https" then return where .. ".redirect.scheme must be '', http or https" end
    if type(r.hostname) ~= "string" or (r.hostname ~= "" and not valid_hostname(r.hostname)) then return where .. ".redirect.hostname must be '' or a host name" end
    if not valid_port(r.port) and r.port ~= 0 then return where .. ".redirect.port must be 0 or a port" end
    if not REDIRECT_CODES[r.code] then return where .. ".redirect.code must be 301, 302, 303, 307 or 308" end
    problem = path_replacement_problem(r.path, where .. ".redirect.path")
    if problem then return problem end
  end
  local m = f.mirrors
  if not absent(m) then
    if not is_array(m) or #m > 8 then return where .. ".mirrors must be a list of at most 8" end
    for i, x in ipairs(m) do
      local at = where .. ".mirrors[" .. i .. "]"
      if not is_object(x) or type(x.backend) ~= "string" or x.backend == "" or #x.backend > MAX_NAME then return at .. ".backend must be a backend name" end
      local d, n = x.denominator, x.numerator
      if type(d) ~= "number" or d < 1 or d > 1000000 or d % 1 ~= 0 then return at .. ".denominator must be an integer from 1 to 1000000" end
      if type(n) ~= "number" or n < 0 or n > d or n % 1 ~= 0 then return at .. ".numerator must be an integer from 0 to the denominator" end
    end
  end
  local w = f.rewrite
  if not absent(w) then
    if not is_object(w) then return where .. ".rewrite must be a JSON object" end
    if type(w.hostname) ~= "string" or (w.hostname ~= "" and not valid_hostname(w.hostname)) then return where .. ".rewrite.hostname must be '' or a host name" end
    problem = path_replacement_problem(w.path, where .. ".rewrite.path")
    if problem then return problem end
  end
  return nil
end

-- Weighted backends (route field `split`, drawn per request by lua/router.lua).
local MAX_SPLIT = 16
local MAX_SPLIT_WEIGHT = 1000000
local function split_problem(s, where)
  if absent(s) then return nil end
  if not is_array(s) or #s < 1 or #s > MAX_SPLIT then return where .. " must be a list of 1 to " .. MAX_SPLIT .. " backends" end
  for i, b in ipairs(s) do
    if not is_object(b) or type(b.backend) ~= "string" or b.backend == "" or #b.backend > MAX_NAME then return where .. "[" .. i .. "].backend must be a backend name" end
    local w = b.weight
    if type(w) ~= "number" or w < 1 or w > MAX_SPLIT_WEIGHT or w % 1 ~= 0 then return where .. "[" .. i .. "].weight must be an integer from 1 to " .. MAX_SPLIT_WEIGHT end
    local problem = header_edits_problem(b.requestHeaders, where .. "[" .. i .. "].requestHeaders") or header_edits_problem(b.responseHeaders, where .. "[" .. i .. "].responseHeaders")
    if problem then return problem end
  end
  return nil
end

-- HTTPRoute retries (src/model/gateway/retry.ts): the codes NGINX tells apart, ascending, and
-- 1 to MAX_ROUTE_RETRIES retries; each set of codes has a location of its own (router.lua).
_M.RETRY_CODE_BITS = { [500] = 1, [502] = 2, [503] = 4, [504] = 8 }
_M.MAX_ROUTE_RETRIES = 10

local function retry_problem(r, where)
  if absent(r) then return nil end
  if not is_object(r) or not whole(r.attempts, _M.MAX_ROUTE_RETRIES) or r.attempts < 1 or not is_array(r.codes) or #r.codes > 4 then
    return where .. " must be an object with attempts from 1 to " .. _M.MAX_ROUTE_RETRIES .. " and at most 4 codes"
  end
  local last = 0
  for _, c in ipairs(r.codes) do
    if not _M.RETRY_CODE_BITS[c] or c <= last then return where .. ".codes must be 500, 502, 503 or 504, ascending" end
    last = c
  end
  return nil
end

local function route_problem(e, where)
  if not is_object(e) then return where .. " must be a JSON object" end
  if not ROUTE_MATCHES[e.match] then return where .. ".match must be exact, prefix or regex" end
  for _, k in ipairs(ROUTE_STRINGS) do
    local v = e[k]
    if type(v) ~= "string" then return where .. "." .. k .. " must be a string" end
    if #v > _M.MAX_ROUTE_STRING then return where .. "." .. k .. " is longer than " .. _M.MAX_ROUTE_STRING .. " bytes" end
  end
  if e.match ~= "regex" and e.pattern:byte(1) ~= 47 then return where .. ".pattern must start with /" end
  if e.backend == "" then return where .. ".backend must not be empty" end
  if type(e.caseless) ~= "boolean" or type(e.denied) ~= "boolean" then return where .. ": caseless and denied must be true or false" end
  if e.deniedStatus ~= nil and e.deniedStatus ~= 500 then return where .. ".deniedStatus must be 500 or absent" end
  local problem = route_settings_problem(e, where) or conditions_problem(e.when, where .. ".when") or filters_problem(e.filters, where .. ".filters")
    or split_problem(e.split, where .. ".split") or retry_problem(e.retry, where .. ".retry")
  if problem then return problem end
  if e.protocol ~= nil and e.protocol ~= "h2c" then return where .. ".protocol must be h2c or absent" end
  if e.tls ~= nil and not (type(e.tls) == "string" and #e.tls == 16 and not e.tls:find("[^0-9a-f]")) then return where .. ".tls must be 16 hex digits or absent" end
  return uri_settings_problem(e, where)
end

--- The problem with one host's decoded entries (a route table's `hosts` value), or nil.
function _M.route_host_problem(host, entries)
  if not valid_route_host(host) or host ~= host:lower() then return "host " .. tostring(host):sub(1, 100) .. " is not a lower-case host name" end
  if not is_array(entries) then return "host " .. host .. ": routes must be a JSON array" end
  if #entries > _M.MAX_HOST_ROUTES then return "host " .. host .. ": more than " .. _M.MAX_HOST_ROUTES .. " routes" end
  local regexes = 0
  for i, e in ipairs(entries) do
    local problem = route_problem(e, "host " .. host .. " [" .. (i - 1) .. "]")
    if problem then return problem end
    if e.match == "regex" then regexes = regexes + 1 end
  end
  if regexes > _M.MAX_HOST_REGEXES then return "host " .. host .. ": more than " .. _M.MAX_HOST_REGEXES .. " regular expressions" end
  return nil
end


--- The problem with the envelope of a route table POST, or nil: `hosts` (name → entries), and
--- for a change to the table NGINX holds, `base` (that table's `id`) and `deleted` (host names).
--- Each changed host's entries are checked by route_host_problem.
function _M.routes_update_problem(t)
  if not is_object(t) or not is_object(t.hosts) then return "expected a JSON object with a hosts object" end
  local count = 0
  for host, entries in pairs(t.hosts) do
    count = count + 1
    if count > _M.MAX_ROUTE_HOSTS then return "more than " .. _M.MAX_ROUTE_HOSTS .. " hosts" end
    if not valid_route_host(host) or host ~= host:lower() then return "host " .. tostring(host):sub(1, 100) .. " is not a lower-case host name" end
    if not is_array(entries) then return "host " .. host .. ": routes must be a JSON array" end
  end
  for _, field in ipairs({ "id", "base" }) do
    local v = t[field]
    if not absent(v) and (type(v) ~= "string" or #v == 0 or #v > MAX_TABLE_ID) then
      return field .. " must be a string of 1 to " .. MAX_TABLE_ID .. " bytes"
    end
  end
  -- The `*.x` hosts whose wildcard covers several labels (Gateway API): every POST names them all.
  if not absent(t.several) then
    if not is_array(t.several) then return "several must be a JSON array of wildcard host names" end
    if #t.several > _M.MAX_ROUTE_HOSTS then return "more than " .. _M.MAX_ROUTE_HOSTS .. " several-label hosts" end
    for _, host in ipairs(t.several) do
      if not valid_route_host(host) or host ~= host:lower() or host:sub(1, 2) ~= "*." then
        return "several: " .. tostring(host):sub(1, 100) .. " is not a lower-case wildcard host name"
      end
    end
  end
  if not absent(t.deleted) then
    if absent(t.base) then return "deleted needs base (the table it changes)" end
    if not is_array(t.deleted) then return "deleted must be a JSON array of host names" end
    if #t.deleted > _M.MAX_ROUTE_HOSTS then return "more than " .. _M.MAX_ROUTE_HOSTS .. " deleted hosts" end
    for _, host in ipairs(t.deleted) do
      if not valid_route_host(host) or host ~= host:lower() then return "deleted host " .. tostring(host):sub(1, 100) .. " is not a lower-case host name" end
      if t.hosts[host] ~= nil then return "host " .. host .. " is both changed and deleted" end
    end
  end
  return nil
end

return _M
