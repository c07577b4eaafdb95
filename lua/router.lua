-- The router of dynamic hosts (docs/dynamic-routes.md): it looks the request's host up in the
-- route table the controller POSTs (/configuration/routes), matches the path as NGINX matches
-- locations, and does what the host's static location block would have done: the variables logs
-- and metrics read, the SSL redirect, the backend (and its default-backend fallback) for the
-- balancer. Where the default server's only location is the default backend's `/`, route() does
-- it all in that location. Elsewhere (a default server with locations of its own, a static
-- wildcard server) find() matches in the server rewrite phase, NGINX moves a dynamic host's
-- request to the internal dynamic-route location, and serve() goes on from there.
-- The table is stored per host (configuration.lua): each worker reads and compiles a host when a
-- request first asks for it, at the routes version it is at, and forgets only the hosts a new
-- version changed (one shared-dict read per request tells it one came), so a request sees one
-- table, never a mix.
local cjson = require("cjson.safe")
local configuration = require("configuration")
local freshness = require("freshness")
local balancer = require("balancer")
local lua_ingress = require("lua_ingress")
local opentelemetry = require("opentelemetry")
local pcre2 = require("pcre2")
local gateway_frontend = require("gateway_frontend")
local route_access = require("route_access")
local route_cors = require("route_cors")
local route_headers = require("route_headers")
local route_filters = require("route_filters")
local route_match = require("route_match")
local route_memo = require("route_memo")
local route_upstream = require("route_upstream")
local shapes = require("configuration_shapes")
local route_redirect = require("route_redirect")
local route_rewrite = require("route_rewrite")
local route_upstream_headers = require("route_upstream_headers")
local ngx = ngx
local ipairs, pairs, tostring, type = ipairs, pairs, tostring, type
local table_sort = table.sort
local string_sub, string_byte, string_gmatch, string_gsub = string.sub, string.byte, string.gmatch, string.gsub
local math_random = math.random

local _M = {}

-- The router's locations (src/render/dynamic-routes.ts): a route with retries, or with an HTTP/2
-- cleartext backend, is served in one of its own (proxy_next_upstream of its codes, grpc_pass);
-- a backend with a BackendTLSPolicy in the TLS location its entry names.
local DYNAMIC_ROUTE_URI = "/.ingress-rx/dynamic-route"
local RETRY_CODE_BITS = shapes.RETRY_CODE_BITS
-- The ids of the TLS locations this nginx.conf has (configure()).
local backend_tls = {}

local function router_location(e)
  if e.tls then
    -- A table posted before the reload that adds its location: unavailable in this worker,
    -- never sent elsewhere (an exec to a missing location would match another).
    if backend_tls[e.tls] then return DYNAMIC_ROUTE_URI .. "-tls-" .. e.tls end
    e.denied = true
    e.deniedStatus = ngx.HTTP_SERVICE_UNAVAILABLE
    return nil
  end
  local h2c = e.protocol == "h2c"
  if not (h2c or e.retry) then return nil end
  local uri = DYNAMIC_ROUTE_URI .. (h2c and "-h2c" or "")
  if e.retry then
    local mask = 0
    for _, c in ipairs(e.retry.codes) do mask = mask + RETRY_CODE_BITS[c] end
    uri = uri .. "-retry-" .. mask
  end
  return uri
end

-- The bounded decoder of route tables (nesting is hosts → list → entry: 4 levels; a weighted
-- backend's header edits go deepest: entry → split → backend → requestHeaders → set → item, 9).
local decoder = cjson.new()
decoder.decode_max_depth(9)

-- $namespace, $ingress_name, $service_name, $service_port and $location_path cost a write by
-- name each per request; a route writes them only when something reads them: nginx.conf (the
-- renderer looks: configure()), its default-backend fallback, or its backend's balancing. (A
-- route's own templates cannot name them: configuration_shapes.lua allows other variables only.)
local configuration_reads = true
-- The metrics log's routed format reads the route's four fields from one variable.
local route_labels = false

--- From init_by_lua: whether nginx.conf reads a location variable where a dynamic host's
--- request goes (a log format, a snippet, …), whether the metrics log is on, and the ids of
--- its TLS locations.
function _M.configure(opts)
  configuration_reads = opts.location_variables_read ~= false
  route_labels = opts.route_labels == true
  backend_tls = opts.backend_tls or {}
end

--- A route table POST decoded from JSON text (its envelope checked: configuration_shapes
--- routes_update_problem), or nil and why; no host's entries are checked yet.
function _M.decode(raw)
  local decoded, err = decoder.decode(raw)
  if decoded == nil then return nil, "invalid JSON: " .. tostring(err) end
  local problem = shapes.routes_update_problem(decoded)
  if problem then return nil, problem end
  return decoded
end

--- A host's decoded entries as the JSON text stored for it (configuration.lua); the same
--- entries give the same text. cjson escapes every "/" (as "\/"): those read as posted again. An
--- empty array comes out as an empty object, which decodes to the same empty table.
function _M.encode_host(entries)
  return (string_gsub(cjson.encode(entries), "\\/", "/"))
end

-- Weighted backends: the running sums of the weights, for one draw per request.
local function compile_split(e)
  local s = e.split
  if type(s) ~= "table" then
    e.split = nil -- JSON null: absent
    return
  end
  local total = 0
  for i = 1, #s do
    local b = s[i]
    total = total + b.weight
    b.upto = total
    if type(b.requestHeaders) ~= "table" then b.requestHeaders = nil end
    if type(b.responseHeaders) ~= "table" then b.responseHeaders = nil else route_filters.in_use = true end
  end
  s.total = total
end

-- The backend entry of a weighted route for this request: one draw in 1..total.
local function drawn(s)
  if #s == 1 then return s[1] end
  local n = math_random(s.total)
  for i = 1, #s do
    if n <= s[i].upto then return s[i] end
  end
  return s[#s]
end

--- A host's per-worker form: its exact paths, its prefixes by length (longest first) and its
--- compiled regular expressions in order; or nil and the first entry that does not compile.
local function compile_host(name, entries)
    local h = { exact = {}, prefix = {}, lengths = {}, regexes = {} }
    local seen_length = {}
    for _, e in ipairs(entries) do
      local rewrite_err = route_rewrite.compile(e)
      if rewrite_err then return nil, "host " .. name .. ": " .. rewrite_err end
      local p = e.pattern
      if not route_access.compile(e) then return nil, "host " .. name .. ": a source range of " .. p:sub(1, 100) .. " does not parse" end
      route_upstream.compile(e)
      e.location = router_location(e)
      route_headers.compile(e)
      route_filters.compile(e)
      compile_split(e)
      local conditional, when_err = route_match.compile(e)
      if when_err then return nil, "host " .. name .. ": " .. when_err end
      if conditional then h.conditional = true end
      -- A default-backend fallback's request headers describe the route (balancer.lua).
      e.writes_variables = configuration_reads or e.fallback ~= ""
      e.labels = e.namespace .. "\t" .. e.ingress .. "\t" .. e.service .. "\t" .. e.path
      local cors, cors_err = route_cors.compile(e)
      if not cors then return nil, "host " .. name .. ": cors origin of " .. p:sub(1, 100) .. ": " .. cors_err end
      if e.match == "exact" then
        local first = h.exact[p]
        if first == nil then
          h.exact[p] = e
          if e.when then e.chain = { e } end
        elseif first.chain then
          first.chain[#first.chain + 1] = e
        end
      elseif e.match == "prefix" then
        local first = h.prefix[p]
        if first and first.chain then first.chain[#first.chain + 1] = e end
        if first == nil then
          h.prefix[p] = e
          if e.when then e.chain = { e } end
          if not seen_length[#p] then
            seen_length[#p] = true
            h.lengths[#h.lengths + 1] = #p
          end
        end
      else
        local code, err = pcre2.compile(p, e.caseless)
        if not code then return nil, "host " .. name .. ": regex " .. p:sub(1, 100) .. ": " .. err end
        if e.when then e.chain = { e } end
        h.regexes[#h.regexes + 1] = { code = code, entry = e }
      end
    end
    table_sort(h.lengths, function(a, b) return a > b end)
    -- NGINX answers `/p` with a 301 to `/p/` when a proxied prefix location `/p/` exists and no
    -- `= /p` (its auto_redirect, before any regex): the same here, so static and dynamic hosts agree.
    h.slash = {}
    for p, e in pairs(h.prefix) do
      if #p > 1 and string_sub(p, -1) == "/" and not e.denied then
        local bare = string_sub(p, 1, -2)
        if h.exact[bare] == nil then h.slash[bare] = { slash = p } end
      end
    end
    return h
end

--- The problem with one host's entries that the shape check cannot see (a regular expression
--- that does not compile, …), or nil: the configuration endpoint's check before it stores them.
function _M.check_host(name, entries)
  local h, err = compile_host(name, entries)
  if h then return nil end
  return err
end

-- This worker's view of the route table (configuration.lua stores it per host): the routes
-- version it is at, and the hosts it compiled (false: does not compile, a bug) or found absent
-- at that version. A new version drops only the hosts its log names.
local current_version = 0
local current_generation = -1
local compiled = {}
local absent, absent_count = {}, 0
local MAX_ABSENT = 10000
local matches = route_memo.new()
-- The memo's key for the whole table: a new one empties it.
local epoch = {}

-- The Gateway API wildcards of the table (a set of names), nil when it has none, and their text.
local several, several_text = nil, nil

local function forget_everything()
  compiled = {}
  absent, absent_count = {}, 0
  epoch = {}
end

-- Moves this worker's table to `version`: drops the hosts the versions since changed (every
-- host when a log is gone, or after a restart of the dictionaries).
local function move_to(version)
  local logs = {}
  local whole = version < current_version or version - current_version > configuration.ROUTES_LOGS_KEPT
  if not whole then
    for v = current_version + 1, version do
      local log = configuration.get_routes_log(v)
      if log == nil or log == "*" then whole = true break end
      logs[#logs + 1] = log
    end
  end
  if whole then
    forget_everything()
  else
    for _, log in ipairs(logs) do
      for name in string_gmatch(log, "[^\n]+") do
        compiled[name] = nil
        absent[name] = nil
        -- The memo is by request host: a wildcard's requests are under many.
        if string_byte(name, 1) == 42 then epoch = {} else matches:drop(name) end
      end
    end
  end
  -- One read per version: the list changes rarely, and the memo goes with it.
  local text = configuration.get_routes_several()
  if text ~= several_text then
    several_text = text
    several = nil
    if text and text ~= "" then
      several = {}
      for name in string_gmatch(text, "[^\n]+") do several[name] = true end
    end
    epoch = {}
  end
  current_version = version
  pcre2.next_generation()
end

-- Brings the table up to the posted one; false while no table was ever posted. The request's
-- one shared-dict read is the posted generation (freshness.lua), which also brings this
-- worker's backends and certificate answers up to date.
local function routes()
  local generation = freshness.catch_up()
  if generation ~= current_generation then
    current_generation = generation
    local version = configuration.get_routes_version()
    if version ~= current_version then move_to(version) end
  end
  return current_version ~= 0
end

-- Host `name`'s compiled form at this worker's version (compiled on first use), false when it
-- does not compile (a bug: the endpoint compiled it before storing it), nil when the table has
-- no such host; "behind" when a POST stored since made this worker's version unreadable (it
-- moved to the newer one: the caller starts over).
local function compiled_host(name)
  local h = compiled[name]
  if h ~= nil then return h end
  if absent[name] then return nil end
  local text = configuration.get_route_host(name, current_version)
  if text == false then
    move_to(configuration.get_routes_version())
    return "behind"
  end
  if text == nil or text == "" then
    if absent_count >= MAX_ABSENT then absent, absent_count = {}, 0 end
    absent[name] = true
    absent_count = absent_count + 1
    return nil
  end
  local entries, err = decoder.decode(text)
  if entries then h, err = compile_host(name, entries) end
  if not h then
    ngx.log(ngx.ERR, "router: host ", name, ": ", err)
    h = false
  end
  compiled[name] = h
  return h
end

-- A Gateway API wildcard `*.rest` covering the labels before `.rest` of a host whose first
-- label no wildcard covers: the longest such suffix (the most specific). Only in the default
-- server: a request a static wildcard server took belongs to that server's Ingress (its one-label
-- wildcard), unless the table names the host itself.
local function several_labels(host, dot)
  if ngx.var.server_name ~= "_" then return nil end
  while true do
    dot = host:find(".", dot + 1, true)
    if not dot then return nil end
    local name = "*" .. string_sub(host, dot)
    if several[name] then return compiled_host(name) end
  end
end

-- A host of the table: the name itself, or `*.rest` when the first label is one a wildcard
-- server_name covers (`[\w-]+`, as src/render/view.ts wildcardServerName), or, for a Gateway
-- API wildcard (several), several labels.
local function host_routes(host)
  for _ = 1, 3 do
    local h = compiled_host(host)
    if h ~= "behind" then
      if h ~= nil then return h end
      local dot = host:find(".", 1, true)
      if not dot or dot == 1 then return nil end
      if host:find("^[%w_%-]+%.") == nil then return nil end
      h = compiled_host("*" .. string_sub(host, dot))
      if h == nil and several then h = several_labels(host, dot) end
      if h ~= "behind" then return h end
    end
  end
  return false
end

-- The route find() chose, for serve() of the same request: the phases between them run in one
-- go (no yield), so no other request can come in between.
local chosen
local chosen_uri
local chosen_host

-- NGINX's choice of location: an exact match (or the 301 of a `/p/` asked as `/p`), else the
-- longest prefix unless a regular expression (tried in order) matches. nil when nothing matches;
-- "error" when PCRE2 gave up.
-- A match's routes with conditions (route_match.lua) are tried in order; when none takes the
-- request, the next shorter prefix is.
local function match(h, uri)
  local e = h.exact[uri] or h.slash[uri]
  local seen
  if e then
    if not e.chain then return e end
    seen = {}
    e = route_match.pick(e.chain, seen)
    if e then return e end
  end
  local prefix
  local n = #uri
  for _, len in ipairs(h.lengths) do
    if len <= n then
      prefix = h.prefix[string_sub(uri, 1, len)]
      if prefix then
        if not prefix.chain then break end
        seen = seen or {}
        prefix = route_match.pick(prefix.chain, seen)
        if prefix then break end
      end
    end
  end
  for _, r in ipairs(h.regexes) do
    local ok, err = pcre2.find(r.code, uri)
    -- An HTTPRoute's regex path match may come with conditions: it takes the request only when they hold.
    if ok and r.entry.when then
      seen = seen or {}
      ok = route_match.pick(r.entry.chain, seen) ~= nil
    end
    if ok then return r.entry end
    if ok == nil then
      ngx.log(ngx.ERR, "router: regex ", r.entry.pattern:sub(1, 100), " of host ", ngx.var.host, ": ", err)
      return "error"
    end
  end
  return prefix
end

-- The request's route, its $uri and its $host: nil when its host is not dynamic, false when no
-- path of the host matches, "error" when PCRE2 gave up. `port` (":8080"): the request came to a
-- Gateway listener port's server, whose hosts the table names `host:port`.
local function lookup(var, port)
  if not routes() then return nil end
  local host, uri = var.host, var.uri
  if port then host = host .. port end
  local e = matches:get(epoch, host, uri)
  if e == nil then
    local h = host_routes(host)
    if h == nil then return nil end
    if h then e = match(h, uri) else e = "error" end
    -- A host with conditions is matched per request: its match depends on more than the URI.
    if e ~= "error" and not h.conditional then matches:put(host, uri, e or false) end
  end
  return e or false, uri, host
end

-- What the host's static location would do with the request, once matched to route e.
local function apply(e, uri, host, var, moved)
  if e == false then return ngx.exit(ngx.HTTP_NOT_FOUND) end
  if e == "error" then return ngx.exit(ngx.HTTP_INTERNAL_SERVER_ERROR) end
  if e.slash then
    local args = var.args
    return ngx.redirect(args and args ~= "" and (e.slash .. "?" .. args) or e.slash, ngx.HTTP_MOVED_PERMANENTLY)
  end
  local trace = e.trace
  -- First in the rewrite phase, as a traced location opens its span.
  if trace then
    opentelemetry.start(trace.trust, trace.name ~= "" and trace.name or e.path, trace.name == "", e.namespace, e.ingress)
  end
  if e.denied then return ngx.exit(e.deniedStatus or ngx.HTTP_SERVICE_UNAVAILABLE) end
  local backend, picked = e.backend, nil
  if e.split then
    picked = drawn(e.split)
    backend = picked.backend
  end
  if e.writes_variables or balancer.reads_location_variables(backend) then
    var.namespace = e.namespace
    var.ingress_name = e.ingress
    var.service_name = e.service
    var.service_port = e.port
    var.location_path = e.path
  end
  var.proxy_upstream_name = backend
  if route_labels then var.irx_labels = e.labels end
  -- In the order of the location's own directives: its custom headers (on every answer), its
  -- return and app-root, its CORS preflight, its rewrite, its upstream headers, the SSL redirect.
  route_headers.rewrite(e)
  route_redirect.apply(e)
  if e.filters then route_filters.apply(e, uri, moved) end
  if picked and (picked.requestHeaders or picked.responseHeaders) then route_filters.apply_backend(picked) end
  route_cors.rewrite(e)
  route_rewrite.apply(e, uri, moved)
  route_upstream_headers.apply(e)
  if e.redirect ~= "" then lua_ingress.rewrite(e.redirect, host) end
  if e.fallback ~= "" then
    balancer.rewrite(backend, e.fallback)
  else
    balancer.rewrite(backend)
  end
  route_access.check(e)
  route_upstream.rewrite(e)
end

--- In the server rewrite phase (set_by_lua): matches the request; its $uri when the host is
--- dynamic (the location rewrite then moves it to the router's location), else "".
function _M.find()
  local e, uri, host = lookup(ngx.var)
  chosen, chosen_uri, chosen_host = e, uri, host
  if e == nil then return "" end
  return type(e) == "table" and e.location or DYNAMIC_ROUTE_URI
end

--- In the dynamic-route location's rewrite phase, after find() moved the request there.
function _M.serve()
  local e, uri, host = chosen, chosen_uri, chosen_host
  chosen = nil
  if e == nil then return ngx.exit(ngx.HTTP_NOT_FOUND) end
  gateway_frontend.check(ngx.var, host)
  -- $uri as the client sent it again ($dynamic_upstream_uri, the request URI unchanged as from
  -- a static location's bare proxy_pass, and $proxy_alternative_upstream_name are set by the
  -- location). `binary`: a $uri NGINX decoded to control bytes is NGINX's own, which Lua would
  -- otherwise refuse.
  ngx.req.set_uri(uri, false, true)
  -- grpc_pass (h2c) sends $uri and the arguments: a rewrite sets them, not $dynamic_upstream_uri.
  apply(e, uri, host, ngx.var, not (type(e) == "table" and e.protocol == "h2c"))
end

--- In the default server's `/` when the router takes it: a dynamic host's request is served
--- where it is; any other request goes to the named location `default` (the default backend's).
--- In a Gateway listener port's server, `port` (":8080") names that port's hosts.
function _M.route(default, port)
  local var = ngx.var
  local e, uri, host = lookup(var, port)
  if port then host = var.host end
  gateway_frontend.check(var, host or var.host, port)
  if e == nil then return ngx.exec(default) end
  if type(e) == "table" and e.location then
    -- To the router location of its retries or protocol, where serve() goes on.
    chosen, chosen_uri, chosen_host = e, uri, host
    return ngx.exec(e.location, var.args)
  end
  apply(e, uri, host, var, false)
end

--- In the router's location before its rewrite phase, where nginx.conf reads $proxy_host: the
--- route's backend, as a static location's `set $proxy_host $proxy_upstream_name` gives it
--- (set_by_lua: ngx.var cannot write NGINX's own variable). `moved`: find() chose the route in
--- the server rewrite phase; else it is looked up here (and again, memoised, by route()), among
--- the hosts of Gateway listener port `port` when given.
function _M.proxy_host(moved, port)
  local e
  if moved then e = chosen else e = lookup(ngx.var, port) end
  if type(e) == "table" and not (e.denied or e.slash) then return e.backend or "" end
  return ""
end

--- Whether `host` is a dynamic host of the route table (its requests are served in the default
--- server, whose server_name is "_", but are not the default server's own).
function _M.serves(host)
  return routes() and host_routes(host) ~= nil
end

--- In the router location's header filter: the route's response headers, as its location's
--- more_set_headers would set them (nothing to look up until a table has some).
function _M.header_filter()
  if not (route_headers.in_use or route_cors.in_use or route_filters.in_use) then return end
  local ctx = ngx.ctx
  route_headers.header_filter(ctx)
  route_filters.header_filter(ctx)
  route_cors.header_filter(ctx)
end

return _M
