-- The configuration endpoint on the control server: the controller POSTs backends, servers
-- (certificates) and general settings here; a body of the right shape (configuration_shapes)
-- lands in shared dicts with a change marker that every worker's balancer and certificate code
-- watch. Only get_generation runs per proxied request (freshness.lua).
local cjson = require("cjson.safe")
local shapes = require("configuration_shapes")
local ngx = ngx

local configuration_data = ngx.shared.configuration_data
local certificate_data = ngx.shared.certificate_data
local certificate_servers = ngx.shared.certificate_servers

local EMPTY_UID = "-1"
local BACKENDS_KEY = "backends"
local BACKENDS_VERSION_KEY = "backends_version"
local CERTIFICATES_VERSION_KEY = "certificates_version"
local GENERAL_KEY = "general"
local ROUTES_KEY = "routes"
local ROUTES_VERSION_KEY = "routes_version"
local GENERATION_KEY = "generation"

local _M = {}

--- The uid of NGINX's own fallback certificate in the servers payload (see src/model/core/payload.ts).
_M.FALLBACK_UID = "fallback"

function _M.get_backends_data()
  return configuration_data:get(BACKENDS_KEY)
end

--- Bumped on every accepted POST /configuration/backends; 0 before the first.
function _M.get_backends_version()
  return configuration_data:get(BACKENDS_VERSION_KEY) or 0
end

function _M.get_certificates_version()
  return configuration_data:get(CERTIFICATES_VERSION_KEY) or 0
end

function _M.get_routes_data()
  return configuration_data:get(ROUTES_KEY)
end

--- Bumped on every accepted POST /configuration/routes; 0 before the first.
function _M.get_routes_version()
  return configuration_data:get(ROUTES_VERSION_KEY) or 0
end

--- Bumped with every version above: one read tells a worker whether anything was posted.
function _M.get_generation()
  return configuration_data:get(GENERATION_KEY) or 0
end

function _M.get_general_data()
  return configuration_data:get(GENERAL_KEY)
end

local function bump(version_key)
  configuration_data:incr(version_key, 1, 0)
  configuration_data:incr(GENERATION_KEY, 1, 0)
end

local function respond(status, message)
  ngx.status = status
  if message then
    ngx.header["Content-Type"] = "text/plain"
    ngx.say(message)
  end
end

local function read_body()
  ngx.req.read_body()
  local body = ngx.req.get_body_data()
  if body then return body end
  -- Only when client_body_buffer_size is smaller than the body: NGINX spilled it to a file.
  local path = ngx.req.get_body_file()
  if not path then return nil end
  local file, err = io.open(path, "rb")
  if not file then
    ngx.log(ngx.ERR, "configuration: cannot open request body file: ", err)
    return nil
  end
  body = file:read("*a")
  file:close()
  return body
end

--- Reads and decodes the JSON body; answers 400 itself and returns nil when it is unusable.
local function read_json_body(what, expect)
  local raw = read_body()
  if not raw or #raw == 0 then
    respond(ngx.HTTP_BAD_REQUEST, what .. ": empty request body")
    return nil
  end
  local decoded, err = cjson.decode(raw)
  if decoded == nil then
    respond(ngx.HTTP_BAD_REQUEST, what .. ": invalid JSON: " .. tostring(err))
    return nil
  end
  if type(decoded) ~= "table" then
    respond(ngx.HTTP_BAD_REQUEST, what .. ": expected a JSON " .. expect)
    return nil
  end
  local is_array = decoded[1] ~= nil or (next(decoded) == nil and raw:match("^%s*%[") ~= nil)
  if (expect == "array") ~= is_array then
    respond(ngx.HTTP_BAD_REQUEST, what .. ": expected a JSON " .. expect)
    return nil
  end
  return raw, decoded
end

--- safe_set never evicts other keys (the markers, the general settings) to make room. A
--- failed replace has already dropped the old value, so it is put back.
local function store(dict, dict_name, key, value, what)
  local previous = dict:get(key)
  local ok, err = dict:safe_set(key, value)
  if ok then return true end
  if previous then dict:safe_set(key, previous) end
  if err == "no memory" then
    respond(413,
      what .. ": payload of " .. #value .. " bytes does not fit in lua_shared_dict " .. dict_name)
  else
    respond(ngx.HTTP_INTERNAL_SERVER_ERROR, what .. ": cannot store: " .. tostring(err))
  end
  return false
end

--- A JSON document endpoint: GET returns what was stored; POST validates the body's shape,
--- stores it and, when the document has one, bumps its version so workers re-sync.
local function json_document(what, shape, key, version_key, get, problem_of)
  return function(method)
    if method == "GET" then
      local data = get()
      if not data then return respond(ngx.HTTP_NOT_FOUND, "no " .. what .. " posted yet") end
      ngx.header["Content-Type"] = "application/json"
      return ngx.print(data)
    end
    local raw, decoded = read_json_body(what, shape)
    if not raw then return end
    local problem = problem_of(decoded)
    if problem then return respond(ngx.HTTP_BAD_REQUEST, what .. ": " .. problem) end
    if not store(configuration_data, "configuration_data", key, raw, what) then return end
    if version_key then bump(version_key) end
    respond(ngx.HTTP_CREATED)
  end
end

local handle_backends = json_document("backends", "array", BACKENDS_KEY, BACKENDS_VERSION_KEY, _M.get_backends_data,
                                      shapes.backends_problem)

-- Certificates are stored by the hash of their PEM, so each rotation stores a new one: those no
-- host names any more go, or the dictionary would fill with old ones until every certificate POST
-- was refused. They go after a grace period: a handshake may have read the host's old uid just
-- before the map changed.
local UNREFERENCED_CERTIFICATE_TTL = 10

local function forget_unreferenced_certificates()
  local referenced = {}
  for _, key in ipairs(certificate_servers:get_keys(0)) do
    local uid = certificate_servers:get(key)
    if uid then referenced[uid] = true end
  end
  for _, uid in ipairs(certificate_data:get_keys(0)) do
    local ttl = certificate_data:ttl(uid)
    if referenced[uid] then
      -- Named again (by uid alone, without its PEM) within its grace period: it stays.
      if ttl and ttl > 0 then certificate_data:expire(uid, 0) end
    elseif ttl == 0 then
      certificate_data:expire(uid, UNREFERENCED_CERTIFICATE_TTL)
    end
  end
end

local function handle_servers(method)
  if method ~= "POST" then
    return respond(ngx.HTTP_BAD_REQUEST, "servers: only POST is allowed")
  end
  local raw, payload = read_json_body("servers", "object")
  if not raw then return end
  -- FALLBACK_UID (a TLS host whose Secret is unusable) is NGINX's fallback certificate: never posted.
  local problem = shapes.servers_problem(payload, EMPTY_UID, function(uid)
    return uid == _M.FALLBACK_UID or certificate_data:get(uid) ~= nil
  end)
  if problem then return respond(ngx.HTTP_BAD_REQUEST, "servers: " .. problem) end
  local certificates = payload.certificates ~= cjson.null and payload.certificates or {}
  local servers = payload.servers ~= cjson.null and payload.servers or {}
  -- Certificates first, so a hostname never points at a uid whose PEM is not stored yet.
  for uid, pem in pairs(certificates) do
    if not store(certificate_data, "certificate_data", uid, pem, "certificate " .. uid) then return end
  end
  local named = {}
  for hostname, uid in pairs(servers) do
    local key = hostname:lower()
    named[key] = true
    if uid == EMPTY_UID then
      certificate_servers:delete(key)
    elseif not store(certificate_servers, "certificate_servers", key, uid, "server " .. hostname) then
      return
    end
  end
  -- A complete map (what the controller posts) also says which hosts are gone.
  if payload.complete == true then
    for _, key in ipairs(certificate_servers:get_keys(0)) do
      if not named[key] then certificate_servers:delete(key) end
    end
  end
  forget_unreferenced_certificates()
  bump(CERTIFICATES_VERSION_KEY)
  respond(ngx.HTTP_CREATED)
end

local function handle_certs(method)
  if method ~= "GET" then
    return respond(ngx.HTTP_BAD_REQUEST, "certs: only GET is allowed")
  end
  local hostname = ngx.var.arg_hostname
  if not hostname or hostname == "" then
    return respond(ngx.HTTP_BAD_REQUEST, "certs: the hostname query argument is required")
  end
  local pem = require("certificate").get_pem_cert(hostname)
  if not pem then
    return respond(ngx.HTTP_NOT_FOUND, "no certificate found for hostname " .. hostname)
  end
  ngx.print(pem)
end

--- The route table of dynamic hosts (lua/router.lua): decoded with bounded nesting, its shape
--- and sizes checked and every regular expression compiled before it is stored, so a worker
--- never meets a table it cannot use whole.
local function handle_routes(method)
  if method == "GET" then
    local data = _M.get_routes_data()
    if not data then return respond(ngx.HTTP_NOT_FOUND, "no routes posted yet") end
    ngx.header["Content-Type"] = "application/json"
    return ngx.print(data)
  end
  local router = require("router")
  local raw = read_body()
  if not raw or #raw == 0 then return respond(ngx.HTTP_BAD_REQUEST, "routes: empty request body") end
  local decoded, err = router.decode(raw)
  if decoded then
    local compiled
    compiled, err = router.compile(decoded)
    if compiled then err = nil end
  end
  if err then return respond(ngx.HTTP_BAD_REQUEST, "routes: " .. err) end
  if not store(configuration_data, "configuration_data", ROUTES_KEY, raw, "routes") then return end
  bump(ROUTES_VERSION_KEY)
  respond(ngx.HTTP_CREATED)
end

local handle_general = json_document("general", "object", GENERAL_KEY, nil, _M.get_general_data, shapes.general_problem)

local HANDLERS = {
  ["/configuration/backends"] = handle_backends,
  ["/configuration/servers"] = handle_servers,
  ["/configuration/certs"] = handle_certs,
  ["/configuration/general"] = handle_general,
  ["/configuration/routes"] = handle_routes,
}

function _M.call()
  local method = ngx.req.get_method()
  if method ~= "GET" and method ~= "POST" then
    return respond(ngx.HTTP_BAD_REQUEST, "only GET and POST requests are allowed")
  end
  local handler = HANDLERS[ngx.var.uri]
  if not handler then
    return respond(ngx.HTTP_NOT_FOUND, "not found")
  end
  handler(method)
end

function _M.handle_is_dynamic_lb_initialized()
  if _M.get_backends_data() then
    return ngx.exit(ngx.HTTP_OK)
  end
  return ngx.exit(ngx.HTTP_NOT_FOUND)
end

return _M
