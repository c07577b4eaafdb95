-- The dynamic upstream: each worker keeps one balancer per backend, rebuilt from the posted
-- backend's JSON when a change names it (checked by a timer and by the first request after a
-- post; only the backends a change names are decoded).
-- rewrite() picks the backend (canary rules included) and answers 503 there; balance() sets
-- the peer inside balancer_by_lua; header_filter() feeds the EWMA. A round-robin or hashing
-- request keeps no per-request state (no ngx.ctx): the per-request path is the hot path.
local ngx_balancer = require("ngx.balancer")
local semaphore = require("ngx.semaphore")
local cjson = require("cjson.safe")
local configuration = require("configuration")
local freshness = require("freshness")
local dns = require("dns")
local address_policy = require("address_policy")
local passive_health = require("balancer.passive_health")
local util = require("util")
local route_upstream = require("route_upstream")
local request_id = require("request_id")
local ngx = ngx

local RESOLVE_WAIT_S = 3 -- longer than one DNS query's timeout (dns.lua)
local SYNC_INTERVAL = 0.1 -- seconds; a posted change reaches every worker within this
local MAX_TRIES = 3
local DEFAULT_ALGORITHM = "round_robin"

local IMPLEMENTATIONS = {
  round_robin = require("balancer.round_robin"),
  ewma = require("balancer.ewma"),
  chash = require("balancer.chash"),
  chashsubset = require("balancer.chashsubset"),
  sticky_balanced = require("balancer.sticky_balanced"),
  sticky_persistent = require("balancer.sticky_persistent"),
}

local _M = {}

-- Per-worker state (each worker runs its own copy of this module).
local balancers = {}
local synced_version = 0
local external_name_backends = {} -- name → backend as posted, its endpoints still host names
-- Whether some balancer keeps per-request state (EWMA, cookie affinity): only then do
-- balance() and header_filter() touch ngx.ctx.
local stateful_balancers = false

local function implementation_for(backend)
  local affinity = backend.sessionAffinityConfig
  if type(affinity) == "table" and affinity.name == "cookie" then
    return affinity.mode == "persistent" and IMPLEMENTATIONS.sticky_persistent
      or IMPLEMENTATIONS.sticky_balanced
  end
  local hash = backend.upstreamHashByConfig
  if type(hash) == "table" and type(hash["upstream-hash-by"]) == "string"
     and hash["upstream-hash-by"] ~= "" then
    return hash["upstream-hash-by-subset"] and IMPLEMENTATIONS.chashsubset or IMPLEMENTATIONS.chash
  end
  local name = backend["load-balance"]
  if name == nil or name == "" then name = DEFAULT_ALGORITHM end
  local implementation = IMPLEMENTATIONS[name]
  if not implementation then
    ngx.log(ngx.WARN, "backend ", backend.name, ": load-balance \"", tostring(name),
            "\" is not supported, using ", DEFAULT_ALGORITHM)
    implementation = IMPLEMENTATIONS[DEFAULT_ALGORITHM]
  end
  return implementation
end

--- Endpoints NGINX can dial: IP addresses only (no resolver in balancer_by_lua), judged by the
--- address policy and given to NGINX in the spelling that was judged. Each gets its
--- "address:port" key once here.
local function usable_endpoints(backend)
  local out = {}
  if type(backend.endpoints) ~= "table" then return out end
  for _, endpoint in ipairs(backend.endpoints) do
    local port = tonumber(endpoint.port)
    local parsed = address_policy.parse(endpoint.address)
    local refused = parsed and port and address_policy.refusal(parsed, port, backend.name)
    if not parsed or not port then
      ngx.log(ngx.WARN, "backend ", backend.name, ": skipping endpoint ", tostring(endpoint.address), ":",
              tostring(endpoint.port), " (only IP addresses can be balanced)")
    elseif refused then
      ngx.log(ngx.ERR, "backend ", backend.name, ": refusing endpoint ", tostring(endpoint.address), ":", port,
              endpoint.resolved_from and (" (resolved from " .. endpoint.resolved_from .. ")") or "",
              ": ", refused, " (see --allow-upstream-addresses)")
    else
      local address = parsed.address
      local peer = parsed.family == 6 and "[" .. address .. "]" or address
      out[#out + 1] = { address = address, port = port, peer = peer,
                        key = util.endpoint_key({ address = address, port = port }) }
    end
  end
  return out
end

local function canary_policy(backend)
  local policy = backend.trafficShapingPolicy
  if type(policy) ~= "table" then return nil end
  local compiled = {
    weight = tonumber(policy.weight) or 0,
    weight_total = 100,
    header_value = policy.headerValue ~= "" and policy.headerValue or nil,
    cookie_var = (type(policy.cookie) == "string" and policy.cookie ~= "") and ("cookie_" .. policy.cookie) or nil,
  }
  local total = tonumber(policy.weightTotal)
  if total and total > 100 then compiled.weight_total = total end
  if type(policy.header) == "string" and policy.header ~= "" then
    compiled.header_var = util.header_var_name(policy.header)
  end
  local pattern = policy.headerPattern
  if policy.headerPatternInvalid == true then
    -- Refused by the controller: as a pattern that fails to compile (ingress-nginx's behaviour).
    compiled.header_pattern_invalid = true
  elseif type(pattern) == "string" and pattern ~= "" then
    local _, err = ngx.re.match("", pattern, "jo")
    if err then
      ngx.log(ngx.ERR, "backend ", backend.name, ": invalid canary-by-header-pattern \"", pattern,
              "\": ", err, "; matching requests stay on the primary backend")
      compiled.header_pattern_invalid = true
    else
      compiled.header_pattern = pattern
    end
  end
  return compiled
end

local function sync_backend(backend)
  local endpoints = usable_endpoints(backend)
  if #endpoints == 0 then
    balancers[backend.name] = nil
    return
  end
  local prepared = {
    name = backend.name,
    endpoints = endpoints,
    sessionAffinityConfig = backend.sessionAffinityConfig,
    upstreamHashByConfig = backend.upstreamHashByConfig,
  }
  local implementation = implementation_for(backend)
  local balancer = balancers[backend.name]
  if not balancer or getmetatable(balancer) ~= implementation then
    balancer = implementation:new(prepared)
    balancers[backend.name] = balancer
  else
    balancer:sync(prepared)
    passive_health.sync(balancer)
  end
  balancer.backend_name = backend.name
  -- nil rather than empty: the per-request code tests it before anything else.
  local alternatives = backend.alternativeBackends
  balancer.alternative_backends = type(alternatives) == "table" and alternatives[1] ~= nil
    and alternatives or nil
  balancer.canary = canary_policy(backend)
end

local function is_external_name(backend)
  local service = backend.service
  return type(service) == "table" and type(service.spec) == "table" and service.spec.type == "ExternalName"
end

--- A host name, to be resolved: not an IP address in any spelling, not a localhost name.
local function is_host_name(address)
  return type(address) == "string" and not address_policy.parse(address)
    and not address_policy.is_localhost_name(address)
end

--- The backend with its host names replaced by their A records (cosockets: timers only); the
--- answers are judged by usable_endpoints() like any address, a localhost name as 127.0.0.1.
local function resolved(backend)
  local endpoints = {}
  for _, endpoint in ipairs(type(backend.endpoints) == "table" and backend.endpoints or {}) do
    if is_host_name(endpoint.address) then
      for _, address in ipairs(dns.lookup(endpoint.address)) do
        endpoints[#endpoints + 1] = { address = address, port = endpoint.port, resolved_from = endpoint.address }
      end
    elseif address_policy.is_localhost_name(endpoint.address) then
      endpoints[#endpoints + 1] = { address = "127.0.0.1", port = endpoint.port, resolved_from = endpoint.address }
    else
      endpoints[#endpoints + 1] = endpoint
    end
  end
  local copy = {}
  for k, v in pairs(backend) do copy[k] = v end
  copy.endpoints = endpoints
  return copy
end

local function safe_sync(backend)
  local ok, err = pcall(sync_backend, backend)
  if not ok then
    ngx.log(ngx.ERR, "backend ", backend.name, ": cannot build balancer: ", err)
    balancers[backend.name] = nil
  end
end

-- The location variables a backend's balancing reads: the cookie path of session affinity
-- ($location_path), or an upstream-hash-by expression that names one. The router writes them for
-- a route only when something reads them (lua/router.lua).
local LOCATION_VARIABLE = "%$%{?([%w_]+)"
local LOCATION_VARIABLES = { namespace = true, ingress_name = true, service_name = true, service_port = true, location_path = true }
local location_variable_readers = {}

local function reads_location_variables(backend)
  local affinity = backend.sessionAffinityConfig
  if type(affinity) == "table" and affinity.name == "cookie" then return true end
  local hash = type(backend.upstreamHashByConfig) == "table" and backend.upstreamHashByConfig["upstream-hash-by"]
  if type(hash) ~= "string" then return false end
  for name in hash:gmatch(LOCATION_VARIABLE) do
    if LOCATION_VARIABLES[name] then return true end
  end
  return false
end

-- Per backend: whether its own balancing reads a location variable, and its canaries' names.
local own_reads, alternatives_of = {}, {}

-- Backends whose balancing, or whose canaries' balancing, reads a location variable.
local function note_location_variable_readers()
  local readers = {}
  for name, reads in pairs(own_reads) do
    local alternatives = alternatives_of[name]
    if not reads and alternatives then
      for _, alt in ipairs(alternatives) do
        if own_reads[alt] then reads = true end
      end
    end
    if reads then readers[name] = true end
  end
  location_variable_readers = readers
end

--- Whether balancing a request for `name` (or its canary) reads a location variable.
function _M.reads_location_variables(name)
  return location_variable_readers[name] == true
end

local function note_stateful_balancers()
  for _, balancer in pairs(balancers) do
    if balancer.per_request_state then
      stateful_balancers = true
      return
    end
  end
  stateful_balancers = false
end

-- Phases where the resolver's cosockets work (balancer_by_lua and init_worker have none).
local COSOCKET_PHASES = { timer = true, rewrite = true, access = true, content = true }

local function can_resolve()
  return ngx.get_phase() == "timer"
end

-- ExternalName backends posted since the timer last resolved: name → backend as posted.
local unresolved_external_names = {}

local function endpoint_names(backend)
  local names = {}
  for i, endpoint in ipairs(type(backend.endpoints) == "table" and backend.endpoints or {}) do
    names[i] = tostring(endpoint.address) .. ":" .. tostring(endpoint.port)
  end
  return table.concat(names, " ")
end

--- Whether a posted ExternalName backend names other hosts or ports than before.
local function names_changed(before, after)
  return before == nil or endpoint_names(before) ~= endpoint_names(after)
end

local function forget_backend(name)
  balancers[name] = nil
  external_name_backends[name] = nil
  unresolved_external_names[name] = nil
  own_reads[name] = nil
  alternatives_of[name] = nil
end

local function apply_backend(backend, previous_external)
  if is_external_name(backend) then
    external_name_backends[backend.name] = backend
    -- The balancer of the names posted before must not serve the new ones meanwhile: not
    -- while this timer's DNS lookup yields either (a request syncing then finds the new
    -- names already noted, and would keep that balancer).
    if names_changed(previous_external, backend) then balancers[backend.name] = nil end
    if can_resolve() then
      safe_sync(resolved(backend))
    elseif not balancers[backend.name] then
      unresolved_external_names[backend.name] = backend
    end
  else
    external_name_backends[backend.name] = nil
    unresolved_external_names[backend.name] = nil
    safe_sync(backend)
  end
  own_reads[backend.name] = reads_location_variables(backend)
  local alternatives = backend.alternativeBackends
  alternatives_of[backend.name] = type(alternatives) == "table" and alternatives[1] ~= nil and alternatives or nil
end

--- Backend `name` as stored now: applied, or forgotten when it is gone.
local function sync_named(name)
  local text = configuration.get_backend(name)
  local backend = text and cjson.decode(text)
  if type(backend) ~= "table" then
    if text then ngx.log(ngx.ERR, "cannot decode backend ", name) end
    return forget_backend(name)
  end
  apply_backend(backend, external_name_backends[name])
end

-- Applies the backends the versions since this worker's last sync changed (each decoded alone),
-- or, when it cannot know which (its first sync, a missed log, a whole list), every backend.
local function sync_backends()
  local version = configuration.get_backends_version()
  if version == synced_version then return end
  ngx.update_time()
  local started = ngx.now()
  local changed = configuration.get_backends_changed(synced_version, version)
  local count = 0
  if changed then
    for name in pairs(changed) do
      sync_named(name)
      count = count + 1
    end
  else
    local keep = {}
    for _, name in ipairs(configuration.get_backend_names()) do
      keep[name] = true
      sync_named(name)
      count = count + 1
    end
    for name in pairs(balancers) do
      if not keep[name] then forget_backend(name) end
    end
    for name in pairs(own_reads) do
      if not keep[name] then forget_backend(name) end
    end
  end
  note_stateful_balancers()
  note_location_variable_readers()
  synced_version = version
  ngx.update_time()
  ngx.log(ngx.INFO, "backends version ", version, ": ", count, changed and " changed" or "", " backends synced in ",
          math.floor((ngx.now() - started) * 1000), " ms")
end

--- Re-resolves ExternalName backends whose DNS answers have expired (or were never asked).
local function refresh_external_names()
  for _, backend in pairs(external_name_backends) do
    local stale = balancers[backend.name] == nil
    for _, endpoint in ipairs(type(backend.endpoints) == "table" and backend.endpoints or {}) do
      if is_host_name(endpoint.address) and dns.expired(endpoint.address) then
        stale = true
      end
    end
    if stale then
      unresolved_external_names[backend.name] = nil
      safe_sync(resolved(backend))
      note_stateful_balancers()
    end
  end
end

local function tick(premature)
  if premature then return end
  sync_backends()
  refresh_external_names()
end

--- A sticky balancer's cookie pins the request to it. (affinity-canary-behavior is decided by
--- the controller: "sticky" gives the canary backend the primary's affinity, "legacy" does not.)
local function affinitized(balancer)
  return balancer.is_affinitized ~= nil and balancer:is_affinitized()
end

--- ingress-nginx's order: affinity, then header (value, else pattern, else always/never), then
--- cookie (always/never), then weight.
local function route_to_alternative(balancer)
  if not balancer.alternative_backends then return false end
  if affinitized(balancer) then return false end
  local name = balancer.alternative_backends[1]
  local alternative = name and balancers[name]
  if not alternative then return false end
  if affinitized(alternative) then return true end
  local policy = alternative.canary
  if not policy then return false end

  if policy.header_var then
    local header = ngx.var[policy.header_var]
    if header then
      if policy.header_value then
        if header == policy.header_value then return true end
      elseif policy.header_pattern then
        local m, err = ngx.re.match(header, policy.header_pattern, "jo")
        if m then return true end
        if err then
          ngx.log(ngx.ERR, "canary-by-header-pattern error: ", err)
          return false
        end
      elseif policy.header_pattern_invalid then
        return false
      elseif header == "always" then
        return true
      elseif header == "never" then
        return false
      end
    end
  end

  if policy.cookie_var then
    local cookie = ngx.var[policy.cookie_var]
    if cookie == "always" then return true end
    if cookie == "never" then return false end
  end

  return policy.weight > 0 and math.random(policy.weight_total) <= policy.weight
end

function _M.init_worker()
  -- At once for IP endpoints; ExternalName backends need cosockets (a timer, or the request
  -- that first needs one: known_balancer). Later posts are taken up by the first request after
  -- them (freshness.lua) or the timer.
  sync_backends()
  freshness.on_change(sync_backends)
  local ok, err = ngx.timer.at(0, tick)
  if ok then ok, err = ngx.timer.every(SYNC_INTERVAL, tick) end
  if not ok then
    ngx.log(ngx.ERR, "cannot start the backends sync timer: ", err)
  end
end

--- The request goes to the location's default-backend annotation's Service, with the headers
--- ingress-nginx sends to a custom default backend (they describe the request that failed).
local function use_default_backend(name)
  ngx.var.proxy_upstream_name = name
  ngx.req.set_header("X-Code", "503")
  ngx.req.set_header("X-Format", ngx.var.http_accept)
  ngx.req.set_header("X-Original-URI", ngx.var.request_uri)
  ngx.req.set_header("X-Namespace", ngx.var.namespace)
  ngx.req.set_header("X-Ingress-Name", ngx.var.ingress_name)
  ngx.req.set_header("X-Service-Name", ngx.var.service_name)
  ngx.req.set_header("X-Service-Port", ngx.var.service_port)
  ngx.req.set_header("X-Request-ID", ngx.var.req_id)
end

-- name → the semaphore the requests of this worker wait on while one of them resolves it.
local resolving = {}

--- Resolves a posted ExternalName backend in this request; the worker's other requests for it
--- meanwhile wait for that answer rather than answer 503.
local function resolve_for_request(name)
  local pending = resolving[name]
  if pending then
    pending:wait(RESOLVE_WAIT_S)
    return
  end
  local backend = unresolved_external_names[name]
  pending = semaphore.new()
  resolving[name] = pending
  unresolved_external_names[name] = nil
  local ok, answer = pcall(resolved, backend)
  if ok then
    safe_sync(answer)
    note_stateful_balancers()
  else
    ngx.log(ngx.ERR, "backend ", name, ": cannot resolve: ", answer)
  end
  resolving[name] = nil
  local waiters = -pending:count()
  if waiters > 0 then pending:post(waiters) end
end

local function known_balancer(name)
  local balancer = balancers[name]
  if not balancer then
    -- A backend posted since this worker's last timer tick: look before answering 503 (the
    -- shared dict is read only on this miss path, never for a backend the worker knows).
    sync_backends()
    balancer = balancers[name]
    -- An ExternalName backend posted (or changed) since this worker's last timer tick: resolved
    -- for this request, once per post (a name that does not resolve is left to the timer).
    if not balancer and (resolving[name] or unresolved_external_names[name]) and COSOCKET_PHASES[ngx.get_phase()] then
      resolve_for_request(name)
      balancer = balancers[name]
    end
  end
  return balancer
end

--- `backend` is the location's $proxy_upstream_name when the template knows it (saves reading
--- the variable); without it the variable is read. `default_backend`: the upstream of the
--- location's default-backend annotation, used while `backend` has no endpoint.
function _M.rewrite(backend, default_backend)
  request_id.assign()
  local name = backend or ngx.var.proxy_upstream_name
  local balancer = known_balancer(name)
  if not balancer and default_backend then
    balancer = known_balancer(default_backend)
    if balancer then
      use_default_backend(default_backend)
      return
    end
  end
  if balancer and route_to_alternative(balancer) then
    local name = balancer.alternative_backends[1]
    ngx.var.proxy_alternative_upstream_name = name
    balancer = balancers[name]
  end
  if not balancer then
    ngx.status = ngx.HTTP_SERVICE_UNAVAILABLE
    return ngx.exit(ngx.HTTP_SERVICE_UNAVAILABLE)
  end
end

--- One endpoint of backend `name`, drawn at random, for a copy of the request (HTTPRoute
--- RequestMirror, lua/mirror.lua); nil when the backend has none.
function _M.mirror_endpoint(name)
  local balancer = known_balancer(name)
  local endpoints = balancer and balancer.endpoints
  if not endpoints or #endpoints == 0 then return nil end
  return endpoints[math.random(#endpoints)]
end

--- The balancer rewrite() chose, found again from the variables it left (cheaper than
--- ngx.ctx). Only a backend with a canary can have been replaced by its alternative.
local function chosen_balancer()
  local balancer = balancers[ngx.var.proxy_upstream_name]
  if balancer and balancer.alternative_backends then
    -- Compared, not trusted: after an error_page jump the variable may name another's canary.
    local alternative = ngx.var.proxy_alternative_upstream_name
    if alternative == balancer.alternative_backends[1] then balancer = balancers[alternative] end
  end
  return balancer
end

--- One call per try. The tries are allowed on the first one: min(endpoints, MAX_TRIES) in all,
--- NGINX's proxy_next_upstream* deciding which failures are retried.
function _M.balance()
  local balancer = chosen_balancer()
  if not balancer then
    ngx.log(ngx.ERR, "balance(): backend ", tostring(ngx.var.proxy_upstream_name), " is gone since the rewrite phase")
    return
  end
  local failure = ngx_balancer.get_last_failure()
  local first_try = failure == nil
  local endpoint
  if balancer.per_request_state then
    -- EWMA and cookie affinity avoid endpoints already tried and look at the response.
    local ctx = ngx.ctx
    if first_try then
      ctx.balancer_tries = 0
      ctx.balancer_tried = nil
    end
    ctx.balancer = balancer
    endpoint = balancer:balance()
    if endpoint then
      ctx.balancer_tries = (ctx.balancer_tries or 0) + 1 -- nil if the backend became stateful between tries
      local tried = ctx.balancer_tried or {}
      tried[endpoint.key] = true
      ctx.balancer_tried = tried
    end
  else
    if failure == "failed" then passive_health.failed(balancer) end
    endpoint = balancer:balance()
    -- Only after a peer failed: the hot path reads one field.
    if balancer.failed_peers then endpoint = passive_health.live(balancer, endpoint) end
  end
  if not endpoint then
    ngx.log(ngx.ERR, "backend ", balancer.backend_name, ": no endpoint chosen")
    return
  end

  local most, retries = MAX_TRIES, nil
  if route_upstream.in_use then most, retries = route_upstream.balance(most) end -- a dynamic route's timeouts and tries
  if first_try then
    local tries = retries or math.min(#balancer.endpoints, most)
    if tries > 1 then ngx_balancer.set_more_tries(tries - 1) end
  end
  local ok, err = ngx_balancer.set_current_peer(endpoint.peer, endpoint.port)
  if not ok then
    ngx.log(ngx.ERR, "cannot set upstream peer ", endpoint.key, ": ", err)
  end
end

--- Set once per server block (header_filter_by_lua): the EWMA learns the response time and a
--- cookie chosen in the balancer phase is set. ingress-nginx does the EWMA part in the log
--- phase; connect and header times are final here already, and one Lua phase fewer per request
--- is cheaper. Does nothing where balance() kept no state.
function _M.header_filter()
  if not stateful_balancers then return end
  local ctx = ngx.ctx
  local balancer = ctx.balancer
  if not balancer then return end
  ctx.balancer = nil -- once per request, even if an error page is filtered after it
  if balancer.after_balance then balancer:after_balance() end
  util.flush_response_cookie(ctx)
end

--- For tests and debugging: the backend names this worker currently balances.
function _M.get_balancer_names()
  local names = {}
  for name in pairs(balancers) do names[#names + 1] = name end
  table.sort(names)
  return names
end

return _M
