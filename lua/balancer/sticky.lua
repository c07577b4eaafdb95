-- Cookie affinity shared by sticky_balanced and sticky_persistent: the cookie holds the md5 of
-- the chosen endpoint's "address:port"; a request whose cookie names a current endpoint goes
-- there, any other request gets a new endpoint (round robin) and a new cookie.
local util = require("util")
local ngx = ngx

local DEFAULT_COOKIE_NAME = "route"

local _M = {}

--- Makes a sticky implementation named `name` (its metatable identity marks the algorithm).
function _M.implementation(name)
  local impl = { name = name, per_request_state = true }
  impl.__index = impl

  local function index_endpoints(self, endpoints)
    local by_hash = {}
    for _, endpoint in ipairs(endpoints) do
      by_hash[ngx.md5(endpoint.key)] = endpoint
    end
    self.endpoints = endpoints
    self.by_hash = by_hash
  end

  local function apply_affinity(self, backend)
    local affinity = backend.sessionAffinityConfig or {}
    local cookie = affinity.cookieSessionAffinity or {}
    self.cookie = cookie
    self.cookie_name = (cookie.name and cookie.name ~= "") and cookie.name or DEFAULT_COOKIE_NAME
    self.cookie_var = "cookie_" .. self.cookie_name
  end

  function impl.new(self, backend)
    local o = setmetatable({ last = 0 }, self)
    index_endpoints(o, backend.endpoints)
    apply_affinity(o, backend)
    return o
  end

  function impl.sync(self, backend)
    if not util.same_endpoints(self.endpoints, backend.endpoints) then
      index_endpoints(self, backend.endpoints)
      self.last = self.last % #self.endpoints
    end
    apply_affinity(self, backend)
  end

  function impl.endpoint_from_cookie(self)
    local value = ngx.var[self.cookie_var]
    return value and self.by_hash[value]
  end

  --- Is this request pinned to one of our endpoints by its cookie?
  function impl.is_affinitized(self)
    return self:endpoint_from_cookie() ~= nil
  end

  return impl
end

local function pick_new(self, tried)
  local endpoints = self.endpoints
  local n = #endpoints
  for _ = 1, n do
    self.last = self.last % n + 1
    local candidate = endpoints[self.last]
    if not (tried and tried[candidate.key]) then return candidate end
  end
  self.last = self.last % n + 1
  return endpoints[self.last]
end

--- Chrome 51–66 and Safari on iOS 12 / macOS 10.14 mishandle SameSite=None (they treat it as
--- Strict), so conditional_samesite_none leaves the attribute off for them.
local function same_site_none_compatible(user_agent)
  if not user_agent then return true end
  local chrome = tonumber(user_agent:match("Chrom[ei][um]*/(%d+)"))
  if chrome and chrome >= 51 and chrome <= 66 then return false end
  if user_agent:find("%(iP.+; CPU .*OS 12[_%d]*.*%) AppleWebKit/") then return false end
  if user_agent:find("%(Macintosh;.*Mac OS X 10_14[_%d]*.*%) AppleWebKit/")
     and user_agent:find("Version/.* Safari/") then
    return false
  end
  return true
end

local function cookie_string(self, value)
  local cookie = self.cookie
  local parts = { self.cookie_name .. "=" .. value }
  local path = cookie.path
  if not path or path == "" then path = ngx.var.location_path or "/" end
  parts[#parts + 1] = "Path=" .. path
  if cookie.domain and cookie.domain ~= "" then parts[#parts + 1] = "Domain=" .. cookie.domain end
  local expires = tonumber(cookie.expires)
  if expires then parts[#parts + 1] = "Expires=" .. ngx.cookie_time(ngx.time() + expires) end
  local max_age = tonumber(cookie.maxage)
  if max_age then parts[#parts + 1] = "Max-Age=" .. max_age end
  if cookie.secure or ngx.var.https == "on" then parts[#parts + 1] = "Secure" end
  parts[#parts + 1] = "HttpOnly"
  local same_site = cookie.samesite
  if same_site and same_site ~= "" then
    if not (same_site:lower() == "none" and cookie.conditional_samesite_none
            and not same_site_none_compatible(ngx.var.http_user_agent)) then
      parts[#parts + 1] = "SameSite=" .. same_site
    end
  end
  return table.concat(parts, "; ")
end

--- ingress-nginx sets the cookie only on the locations listed for the host (when the list is
--- known); without a $location_path variable every path of a listed host qualifies. A rule
--- without host is listed under "_": the default server's own requests look there (a dynamic
--- host's are served in the default server too, under their own name).
local function should_set_cookie(self)
  local locations = self.cookie.locations
  if type(locations) ~= "table" or next(locations) == nil then return true end
  local host = ngx.var.host
  if locations["_"] ~= nil and ngx.var.server_name == "_" and not require("router").serves(host) then host = "_" end
  local paths = locations[host]
  if paths == nil then
    -- A wildcard server's locations are listed under its "*." name.
    local parent = host:match("^[^.]+(%..+)$")
    if parent then paths = locations["*" .. parent] end
  end
  if type(paths) ~= "table" then return false end
  local current = ngx.var.location_path
  if not current then return true end
  for _, path in ipairs(paths) do
    if path == current then return true end
  end
  return false
end

local function pin(self, endpoint)
  if should_set_cookie(self) then
    util.queue_response_cookie(cookie_string(self, ngx.md5(endpoint.key)))
  end
  return endpoint
end

--- Called once per try; ngx.ctx.balancer_tries counts the tries before this one.
function _M.balance(self)
  local ctx = ngx.ctx
  if (ctx.balancer_tries or 0) == 0 then
    local pinned = self:endpoint_from_cookie()
    if pinned then
      ctx.sticky_from_cookie = pinned
      return pinned
    end
    return pin(self, pick_new(self, nil))
  end
  -- A retry: the previous endpoint failed.
  if ctx.sticky_from_cookie and not self.cookie.changeonfailure then
    return ctx.sticky_from_cookie
  end
  return pin(self, pick_new(self, ctx.balancer_tried))
end

return _M
