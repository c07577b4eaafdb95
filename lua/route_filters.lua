-- HTTPRoute filters of a dynamic route (route-table field `filters`: src/model/core/types.ts
-- RouteFilters; every name and value checked by the model and lua/configuration_shapes.lua):
-- RequestRedirect answers the request; RequestHeaderModifier edits what the upstream gets,
-- URLRewrite its Host and path; ResponseHeaderModifier edits the answer in the header filter;
-- RequestMirror sends copies (lua/mirror.lua) to endpoints of the mirror backends.
local balancer = require("balancer")
local mirror = require("mirror")
local route_rewrite = require("route_rewrite")
local util = require("util")
local header_value = util.header_value
local ngx = ngx
local ipairs, type = ipairs, type
local concat = table.concat
local sub = string.sub
local math_random = math.random

local _M = {}

--- Whether some route table of this worker had response header edits (see route_headers.in_use).
_M.in_use = false

--- At table compile time.
function _M.compile(e)
  local f = e.filters
  if type(f) ~= "table" then
    e.filters = nil -- JSON null: absent
    return
  end
  for _, k in ipairs({ "requestHeaders", "responseHeaders", "redirect", "rewrite" }) do
    if type(f[k]) ~= "table" then f[k] = nil end
  end
  if f.redirect and type(f.redirect.path) ~= "table" then f.redirect.path = nil end
  if f.rewrite and type(f.rewrite.path) ~= "table" then f.rewrite.path = nil end
  if type(f.mirrors) ~= "table" or #f.mirrors == 0 then f.mirrors = nil end
  if f.responseHeaders then _M.in_use = true end
end

-- The path after a path modifier: the whole replaced, or the route's matched prefix (`e.path`,
-- the PathPrefix value; a trailing `/` ignored as the match ignores it).
local function new_path(r, e, uri)
  if r.type == "ReplaceFullPath" then return r.value end
  local prefix = e.path:gsub("/+$", "")
  local rest = sub(uri, #prefix + 1)
  local path = r.value:gsub("/+$", "") .. rest
  if path == "" then return "/" end
  if path:byte(1) ~= 47 then path = "/" .. path end
  return path
end

local function joined(v)
  if type(v) == "table" then return concat(v, ",") end
  return v
end

local function redirect(r, e, uri)
  local var = ngx.var
  local scheme = r.scheme ~= "" and r.scheme or var.scheme
  local host = r.hostname ~= "" and r.hostname or var.host
  local port = ""
  if r.port ~= 0 and r.port ~= (scheme == "https" and 443 or 80) then port = ":" .. r.port end
  local path = r.path and new_path(r.path, e, uri) or uri
  local args = var.args
  local url = scheme .. "://" .. host .. port .. route_rewrite.escape(path) .. ((args and args ~= "") and ("?" .. args) or "")
  ngx.header["Location"] = header_value(url)
  return ngx.exit(r.code)
end

local function edit_request(h)
  for _, s in ipairs(h.set) do ngx.req.set_header(s.name, s.value) end
  if #h.add > 0 then
    local headers = ngx.req.get_headers(100)
    for _, a in ipairs(h.add) do
      local old = headers[a.name]
      ngx.req.set_header(a.name, old and (joined(old) .. "," .. a.value) or a.value)
    end
  end
  for _, name in ipairs(h.remove) do ngx.req.clear_header(name) end
end

--- After the rule's filters: the header filters of the backendRef the router drew (a weighted
--- route's `split` entry).
function _M.apply_backend(b)
  if b.requestHeaders then edit_request(b.requestHeaders) end
  if b.responseHeaders then ngx.ctx.route_backend_filters = b.responseHeaders end
end

--- In the router's rewrite phase, once matched: the redirect (ngx.exit ends the handler), the
--- request header edits, the mirrors' copies, the rewrite; the response header edits for the
--- header filter.
function _M.apply(e, uri, moved)
  local f = e.filters
  if f.responseHeaders then ngx.ctx.route_filters = f.responseHeaders end
  if f.redirect then return redirect(f.redirect, e, uri) end
  if f.requestHeaders then edit_request(f.requestHeaders) end
  local mirrors = f.mirrors
  if mirrors then
    for _, m in ipairs(mirrors) do
      if m.numerator >= m.denominator or math_random(m.denominator) <= m.numerator then
        local endpoint = balancer.mirror_endpoint(m.backend)
        if endpoint then mirror.copy(m.backend, endpoint) end
      end
    end
  end
  local r = f.rewrite
  if r then
    if r.hostname ~= "" then ngx.var.dynamic_upstream_host = r.hostname end
    if r.path then route_rewrite.set_upstream_uri(new_path(r.path, e, uri), ngx.var.args or "", moved) end
  end
end

local function edit_response(h)
  local header = ngx.header
  for _, s in ipairs(h.set) do header[s.name] = s.value end
  for _, a in ipairs(h.add) do
    local old = header[a.name]
    header[a.name] = old and (joined(old) .. "," .. a.value) or a.value
  end
  for _, name in ipairs(h.remove) do header[name] = nil end
end

--- In the header filter: the rule's edits, then the drawn backendRef's.
function _M.header_filter(ctx)
  local h = ctx.route_filters
  if h then edit_response(h) end
  h = ctx.route_backend_filters
  if h then edit_response(h) end
end

return _M
