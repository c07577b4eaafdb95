-- The configuration endpoint on the control server: the controller POSTs backends, servers
-- (certificates), general settings and the route table (stored per host) here; a body of the
-- right shape (configuration_shapes)
-- lands in shared dicts with a change marker that every worker's balancer and certificate code
-- watch. Only get_generation runs per proxied request (freshness.lua).
local cjson = require("cjson.safe")
local shapes = require("configuration_shapes")
local ngx = ngx

local configuration_data = ngx.shared.configuration_data
local certificate_data = ngx.shared.certificate_data
local certificate_servers = ngx.shared.certificate_servers

local EMPTY_UID = "-1"
local BACKENDS_VERSION_KEY = "backends_version"
local CERTIFICATES_VERSION_KEY = "certificates_version"
local FRONTENDS_KEY = "frontends"
local GENERAL_KEY = "general"
local ROUTES_VERSION_KEY = "routes_version"
local GENERATION_KEY = "generation"

local _M = {}

--- The uid of NGINX's own fallback certificate in the servers payload (see src/model/core/payload.ts).
_M.FALLBACK_UID = "fallback"

-- The backends are framed per backend: each backend's JSON text under a key of its own, so a
-- change stores, and a worker decodes, only the backends it names. Each version logs the names
-- it changed (one a line; "*": every backend), so a worker drops or rebuilds only those.
local BACKEND_PREFIX = "backend:"
local BACKENDS_LOG_PREFIX = "backends_log:"
local BACKENDS_ID_KEY = "backends_id"
local BACKENDS_LOCK_KEY = "backends_lock"
-- Versions whose logs are kept; a worker further behind reads every backend again.
_M.BACKENDS_LOGS_KEPT = 256
-- A version that changed more backends is logged as "*".
local BACKENDS_LOG_MAX = 1000

-- Where each direct member of the JSON array or object opening at `raw`'s byte `open` begins and
-- ends (for an object, the member's `"key":value`), scanning only for the characters that
-- structure JSON. `raw` was decoded already: it is valid JSON. Each backend is stored as the
-- bytes posted (not encoded again: cjson would turn an empty array into an object).
local STRUCTURE = '[%[%]{}",]'
local function member_spans(raw, open)
  local spans = {}
  local depth, pos, start = 0, open + 1, open + 1
  local function add(to)
    local from = raw:find("%S", start)
    if from and from <= to then
      while raw:find("^%s", to) do to = to - 1 end
      spans[#spans + 1] = { from, to }
    end
  end
  while true do
    local i = raw:find(STRUCTURE, pos)
    if not i then return spans end
    local c = raw:byte(i)
    if c == 34 then -- a string: skip it, escapes included
      local j = i + 1
      while true do
        local k = raw:find('["\\]', j)
        if raw:byte(k) == 92 then j = k + 2 else j = k + 1; break end
      end
      pos = j
    elseif c == 91 or c == 123 then -- [ {
      depth = depth + 1
      pos = i + 1
    elseif c == 93 or c == 125 then -- ] }
      if depth == 0 then
        add(i - 1)
        return spans
      end
      depth = depth - 1
      pos = i + 1
    else -- ,
      if depth == 0 then
        add(i - 1)
        start = i + 1
      end
      pos = i + 1
    end
  end
end

--- The posted texts of the elements of the JSON array that is `raw` (a whole list), or of the
--- `backends` member of the JSON object that is `raw` (a change).
local function backend_texts(raw, whole_array)
  local from, to = raw:find("%S"), #raw
  if not whole_array then
    for _, span in ipairs(member_spans(raw, from)) do
      local key_end = raw:find('"%s*:', span[1] + 1)
      if raw:sub(span[1], key_end) == '"backends"' then
        from, to = raw:find("%S", raw:find(":", key_end, true) + 1), span[2]
        break
      end
    end
  end
  local texts = {}
  for i, span in ipairs(member_spans(raw:sub(from, to), 1)) do
    texts[i] = raw:sub(from + span[1] - 1, from + span[2] - 1)
  end
  return texts
end

--- The names of the stored backends, sorted.
function _M.get_backend_names()
  local names = {}
  for _, key in ipairs(configuration_data:get_keys(0)) do
    if key:sub(1, #BACKEND_PREFIX) == BACKEND_PREFIX then names[#names + 1] = key:sub(#BACKEND_PREFIX + 1) end
  end
  table.sort(names)
  return names
end

--- Backend `name`'s JSON text, or nil when there is none.
function _M.get_backend(name)
  return configuration_data:get(BACKEND_PREFIX .. name)
end

--- The names backends versions after `from` up to `to` changed (a set), or nil when a log is
--- missing or one of them changed every backend (the caller reads them all).
function _M.get_backends_changed(from, to)
  if from <= 0 or to <= from or to - from > _M.BACKENDS_LOGS_KEPT then return nil end
  local names = {}
  for v = from + 1, to do
    local log = configuration_data:get(BACKENDS_LOG_PREFIX .. v)
    if log == nil or log == "*" then return nil end
    for name in log:gmatch("[^\n]+") do names[name] = true end
  end
  return names
end

--- The whole list as a JSON array (GET /configuration/backends), or nil before the first POST.
function _M.get_backends_data()
  if _M.get_backends_version() == 0 then return nil end
  local parts = {}
  for _, name in ipairs(_M.get_backend_names()) do
    parts[#parts + 1] = configuration_data:get(BACKEND_PREFIX .. name)
  end
  return "[" .. table.concat(parts, ",") .. "]"
end

--- Bumped on every accepted POST /configuration/backends; 0 before the first.
function _M.get_backends_version()
  return configuration_data:get(BACKENDS_VERSION_KEY) or 0
end

--- The Gateway API's HTTPS listener table as posted (JSON text), or nil.
function _M.get_frontends()
  return configuration_data:get(FRONTENDS_KEY)
end

function _M.get_certificates_version()
  return configuration_data:get(CERTIFICATES_VERSION_KEY) or 0
end

-- The route table is framed per host: each host's entries (their JSON text) under a key of its
-- own, prefixed with the routes version that wrote them ("<version>:<text>"; no text: deleted).
-- The value a host had before its last change stays a while beside it, so a worker whose table
-- is one version behind (a POST stored between its catch-up and its lookup) still reads its own
-- version's; each version logs the hosts it changed, so a worker drops only those.
local ROUTE_HOST_PREFIX = "route:"
local ROUTE_PREVIOUS_PREFIX = "route_previous:"
local ROUTES_LOG_PREFIX = "routes_log:"
local ROUTES_ID_KEY = "routes_id"
-- The wildcard hosts whose wildcard covers several labels (Gateway API), one a line.
local ROUTES_SEVERAL_KEY = "routes_several"
local ROUTES_LOCK_KEY = "routes_lock"
-- A previous value or a deletion outlives any lookup that may need it (lookups do not yield).
local ROUTE_PREVIOUS_TTL = 10
-- Versions whose logs are kept; a worker further behind starts its table afresh.
_M.ROUTES_LOGS_KEPT = 256
-- A version that changed more hosts is logged as "*" (every host).
local ROUTES_LOG_MAX_HOSTS = 1000

--- A host's stored value: the version that wrote it and its entries' JSON text ("" when that
--- version deleted it); nil when the key is absent.
local function parse_host_value(raw)
  if raw == nil then return nil end
  local colon = raw:find(":", 1, true)
  return tonumber(raw:sub(1, colon - 1)), raw:sub(colon + 1)
end

--- The JSON text of host `name`'s entries as of routes version `version` ("" or nil: not in the
--- table then), or false when the host changed twice since `version` (the caller is behind).
function _M.get_route_host(name, version)
  local v, text = parse_host_value(configuration_data:get(ROUTE_HOST_PREFIX .. name))
  if v == nil or v <= version then return text end
  -- Changed after `version`: the value before that change is `version`'s, or it was absent.
  v, text = parse_host_value(configuration_data:get(ROUTE_PREVIOUS_PREFIX .. name))
  if v == nil then return nil end
  if v <= version then return text end
  return false
end

--- The wildcard hosts of the table that cover several labels (Gateway API), one a line, or nil.
function _M.get_routes_several()
  return configuration_data:get(ROUTES_SEVERAL_KEY)
end

--- The host names routes version `version` changed, "*" for every host, nil when not kept.
function _M.get_routes_log(version)
  return configuration_data:get(ROUTES_LOG_PREFIX .. version)
end

--- The whole table as `{"hosts":{…}}` (GET /configuration/routes), or nil before the first POST.
function _M.get_routes_data()
  if _M.get_routes_version() == 0 then return nil end
  local parts = {}
  local keys = configuration_data:get_keys(0)
  table.sort(keys)
  for _, key in ipairs(keys) do
    if key:sub(1, #ROUTE_HOST_PREFIX) == ROUTE_HOST_PREFIX then
      local _, text = parse_host_value(configuration_data:get(key))
      if text and text ~= "" then
        parts[#parts + 1] = cjson.encode(key:sub(#ROUTE_HOST_PREFIX + 1)) .. ":" .. text
      end
    end
  end
  return '{"hosts":{' .. table.concat(parts, ",") .. "}}"
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

-- Keys written by one POST, each with its previous value, so that a POST that cannot be stored
-- whole leaves nothing of itself behind.
local function undo_list()
  local undo = {}
  return undo, function()
    for i = #undo, 1, -1 do
      local key, previous = undo[i][1], undo[i][2]
      if previous then configuration_data:safe_set(key, previous) else configuration_data:delete(key) end
    end
  end
end

-- Makes a stored change the current version: the names it changed (the workers catch up by
-- them), the id a later change may name as its base, and the version counter.
local function publish(kind, next_version, log, id)
  if not configuration_data:safe_set(kind.log_prefix .. next_version, log) then
    -- Workers that miss a log read everything again: correct, only slower.
    ngx.log(ngx.WARN, kind.name, ": no room for the log of version ", next_version)
  end
  configuration_data:delete(kind.log_prefix .. (next_version - kind.logs_kept))
  -- Without room for the id, no change can be based on this version: the next one is whole.
  configuration_data:delete(kind.id_key)
  if id ~= nil and id ~= cjson.null then configuration_data:safe_set(kind.id_key, id) end
  bump(kind.version_key)
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

--- The backends: the whole list (a JSON array, ingress-nginx's contract; or `{"id","backends"}`),
--- or a change to the list NGINX holds (`{"base","id","backends","deleted"}`: `base` that list's
--- `id`, `backends` those added or changed, `deleted` the names of those gone). The whole body is
--- checked before anything is stored, and a failure to store puts back what was there, so a POST
--- changes the list whole or not at all.
local function backends_answer(status, message)
  respond(status, "backends: " .. message)
end

local function store_backends(list, texts, deleted, base, id, whole)
  if base ~= nil then
    local held = configuration_data:get(BACKENDS_ID_KEY)
    if held ~= base then
      return backends_answer(ngx.HTTP_CONFLICT, "a change to list " .. base .. ", but NGINX holds "
        .. (held and ("list " .. held) or "no list of that controller") .. ": post the whole list")
    end
  end
  -- What changes: name → new text (false deletes), in a stable order for the log.
  local changed, names = {}, {}
  local need = 0
  for i, backend in ipairs(list) do
    local text = texts[i]
    if configuration_data:get(BACKEND_PREFIX .. backend.name) ~= text then
      changed[backend.name] = text
      names[#names + 1] = backend.name
      need = need + #text
    end
  end
  for _, name in ipairs(deleted) do
    if configuration_data:get(BACKEND_PREFIX .. name) == nil then
      -- The list NGINX holds is not the one the change was made against.
      return backends_answer(ngx.HTTP_CONFLICT, "deleted names backend " .. name .. ", which NGINX does not hold: post the whole list")
    end
    changed[name] = false
    names[#names + 1] = name
  end
  if whole then
    local posted = {}
    for _, backend in ipairs(list) do posted[backend.name] = true end
    for _, name in ipairs(_M.get_backend_names()) do
      if not posted[name] then
        changed[name] = false
        names[#names + 1] = name
      end
    end
  end
  table.sort(names)

  local undo, rollback = undo_list()
  local room = configuration_data:free_space()
  for _, name in ipairs(names) do
    local key = BACKEND_PREFIX .. name
    local previous = configuration_data:get(key)
    local text = changed[name]
    local ok, err = true, nil
    if text then ok, err = configuration_data:safe_set(key, text) else configuration_data:delete(key) end
    if not ok then
      rollback()
      if err == "no memory" then
        -- What the list lacked, for the controller to set aside no more than that (src/actors/budget-check.ts).
        return backends_answer(413, "backend " .. name .. ": " .. #text .. " bytes of " .. need
          .. " do not fit in lua_shared_dict configuration_data, " .. math.max(need - room, #text)
          .. " bytes short (nothing was changed)")
      end
      return backends_answer(ngx.HTTP_INTERNAL_SERVER_ERROR, "cannot store backend " .. name .. ": " .. tostring(err))
    end
    undo[#undo + 1] = { key, previous }
  end
  local next_version = _M.get_backends_version() + 1
  local log = (whole or #names > BACKENDS_LOG_MAX) and "*" or table.concat(names, "\n")
  publish({ name = "backends", log_prefix = BACKENDS_LOG_PREFIX, logs_kept = _M.BACKENDS_LOGS_KEPT,
    id_key = BACKENDS_ID_KEY, version_key = BACKENDS_VERSION_KEY }, next_version, log, id)
  respond(ngx.HTTP_CREATED)
end

local function handle_backends(method)
  if method == "GET" then
    local data = _M.get_backends_data()
    if not data then return backends_answer(ngx.HTTP_NOT_FOUND, "none posted yet") end
    ngx.header["Content-Type"] = "application/json"
    return ngx.print(data)
  end
  local raw = read_body()
  if not raw or #raw == 0 then return backends_answer(ngx.HTTP_BAD_REQUEST, "empty request body") end
  local decoded, err = cjson.decode(raw)
  if decoded == nil then return backends_answer(ngx.HTTP_BAD_REQUEST, "invalid JSON: " .. tostring(err)) end
  local whole_array = raw:match("^%s*%[") ~= nil
  if not whole_array then
    local problem = shapes.backends_update_problem(decoded)
    if problem then return backends_answer(ngx.HTTP_BAD_REQUEST, problem) end
  end
  -- Each backend as it will be stored and decoded: its posted bytes, decoded alone.
  local texts = backend_texts(raw, whole_array)
  local list = {}
  for i, text in ipairs(texts) do list[i] = cjson.decode(text) end
  if #list ~= #texts or #texts ~= #(whole_array and decoded or decoded.backends) then
    return backends_answer(ngx.HTTP_BAD_REQUEST, "the backends cannot be told apart in the body (a key given twice?)")
  end
  local function given(v) if v ~= cjson.null then return v end end
  local deleted = whole_array and {} or given(decoded.deleted) or {}
  local base, id = not whole_array and given(decoded.base) or nil, not whole_array and given(decoded.id) or nil
  local problem = shapes.backends_problem(list) or shapes.backends_deleted_problem(list, deleted, base)
  if problem then return backends_answer(ngx.HTTP_BAD_REQUEST, problem) end
  -- Workers store one POST at a time (nothing below yields; the lock is for other workers).
  if not configuration_data:safe_add(BACKENDS_LOCK_KEY, true, 30) then
    return backends_answer(ngx.HTTP_CONFLICT, "another POST is being stored")
  end
  local ok, failure = pcall(store_backends, list, texts, deleted, base, id, base == nil)
  configuration_data:delete(BACKENDS_LOCK_KEY)
  if not ok then
    ngx.log(ngx.ERR, "backends: ", failure)
    backends_answer(ngx.HTTP_INTERNAL_SERVER_ERROR, "internal error")
  end
end

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
  -- The Gateway API's HTTPS listeners (lua/gateway_frontend.lua): a complete map without them has none.
  if payload.frontends ~= nil and payload.frontends ~= cjson.null then
    if not store(configuration_data, "configuration_data", FRONTENDS_KEY, cjson.encode(payload.frontends), "frontends") then return end
  elseif payload.complete == true then
    configuration_data:delete(FRONTENDS_KEY)
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

--- The route table of dynamic hosts (lua/router.lua): the whole table (`hosts`), or a change
--- to the one NGINX holds (`base`: that table's `id`; `hosts`: the hosts whose entries changed;
--- `deleted`). Decoded with bounded nesting; each host whose entries differ from the stored ones
--- is checked and compiled before anything is stored, so a POST either changes the table whole
--- or not at all, and a worker never meets a host it cannot use.
local function routes_conflict(message)
  respond(ngx.HTTP_CONFLICT, "routes: " .. message)
end

-- Every host stored (deleted ones aside), for a whole table's deletions.
local function stored_hosts()
  local hosts = {}
  for _, key in ipairs(configuration_data:get_keys(0)) do
    if key:sub(1, #ROUTE_HOST_PREFIX) == ROUTE_HOST_PREFIX then
      local _, text = parse_host_value(configuration_data:get(key))
      if text and text ~= "" then hosts[key:sub(#ROUTE_HOST_PREFIX + 1)] = true end
    end
  end
  return hosts
end

local function store_routes(update, router)
  local version = _M.get_routes_version()
  local delta = update.base ~= nil and update.base ~= cjson.null
  if delta then
    local held = configuration_data:get(ROUTES_ID_KEY)
    if held ~= update.base then
      return routes_conflict("a change to table " .. update.base .. ", but NGINX holds "
        .. (held and ("table " .. held) or "no table of that controller") .. ": post the whole table")
    end
  end
  -- What changes: name → new text ("" deletes), in a stable order for the log.
  local changed, names = {}, {}
  local function delete(name)
    local _, stored = parse_host_value(configuration_data:get(ROUTE_HOST_PREFIX .. name))
    if stored == nil or stored == "" then return end
    changed[name] = ""
    names[#names + 1] = name
  end
  for name, entries in pairs(update.hosts) do
    local text = router.encode_host(entries)
    local _, stored = parse_host_value(configuration_data:get(ROUTE_HOST_PREFIX .. name))
    -- Unchanged bytes were checked and compiled when they were stored.
    if stored ~= text then
      local problem = shapes.route_host_problem(name, entries) or router.check_host(name, entries)
      if problem then return respond(ngx.HTTP_BAD_REQUEST, "routes: " .. problem) end
      changed[name] = text
      names[#names + 1] = name
    end
  end
  if delta then
    if update.deleted ~= nil and update.deleted ~= cjson.null then
      for _, name in ipairs(update.deleted) do delete(name) end
    end
  else
    for name in pairs(stored_hosts()) do
      if update.hosts[name] == nil then delete(name) end
    end
  end
  table.sort(names)

  local next_version = version + 1
  local undo, rollback = undo_list()
  for _, name in ipairs(names) do
    local key = ROUTE_HOST_PREFIX .. name
    local previous = configuration_data:get(key)
    local ok, err = true, nil
    if previous then
      ok, err = configuration_data:safe_set(ROUTE_PREVIOUS_PREFIX .. name, previous, ROUTE_PREVIOUS_TTL)
    end
    if ok then
      local text = changed[name]
      -- A deletion needs keeping only as long as a previous value does.
      ok, err = configuration_data:safe_set(key, next_version .. ":" .. text, text == "" and ROUTE_PREVIOUS_TTL or 0)
    end
    if not ok then
      rollback()
      if err == "no memory" then
        return respond(413, "routes: host " .. name .. ": " .. #changed[name]
          .. " bytes do not fit in lua_shared_dict configuration_data (nothing was changed)")
      end
      return respond(ngx.HTTP_INTERNAL_SERVER_ERROR, "routes: cannot store host " .. name .. ": " .. tostring(err))
    end
    undo[#undo + 1] = { key, previous }
  end
  local several = ""
  if update.several ~= nil and update.several ~= cjson.null then
    local list = {}
    for i, name in ipairs(update.several) do list[i] = name end
    table.sort(list)
    several = table.concat(list, "\n")
  end
  if several ~= (configuration_data:get(ROUTES_SEVERAL_KEY) or "") then
    local ok, err = true, nil
    if several == "" then configuration_data:delete(ROUTES_SEVERAL_KEY)
    else ok, err = configuration_data:safe_set(ROUTES_SEVERAL_KEY, several) end
    if not ok then
      rollback()
      return respond(413, "routes: the several-label hosts do not fit in lua_shared_dict configuration_data (nothing was changed): " .. tostring(err))
    end
  end
  local log = #names > ROUTES_LOG_MAX_HOSTS and "*" or table.concat(names, "\n")
  publish({ name = "routes", log_prefix = ROUTES_LOG_PREFIX, logs_kept = _M.ROUTES_LOGS_KEPT,
    id_key = ROUTES_ID_KEY, version_key = ROUTES_VERSION_KEY }, next_version, log, update.id)
  respond(ngx.HTTP_CREATED)
end

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
  local update, err = router.decode(raw)
  if not update then return respond(ngx.HTTP_BAD_REQUEST, "routes: " .. err) end
  -- Workers store one POST at a time (nothing below yields; the lock is for other workers).
  local locked = configuration_data:safe_add(ROUTES_LOCK_KEY, true, 30)
  if not locked then return routes_conflict("another POST is being stored") end
  local ok, failure = pcall(store_routes, update, router)
  configuration_data:delete(ROUTES_LOCK_KEY)
  if not ok then
    ngx.log(ngx.ERR, "routes: ", failure)
    respond(ngx.HTTP_INTERNAL_SERVER_ERROR, "routes: internal error")
  end
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
  if _M.get_backends_version() > 0 then
    return ngx.exit(ngx.HTTP_OK)
  end
  return ngx.exit(ngx.HTTP_NOT_FOUND)
end

return _M
