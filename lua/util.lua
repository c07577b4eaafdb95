-- Helpers shared by the Lua modules: endpoint keys, NGINX-variable templates (upstream-hash-by),
-- cookie strings and a response-cookie hand-over from the balancer phase to the header filter.
local ngx = ngx
local string_byte = string.byte

local _M = {}

--- "address:port" (IPv6 addresses bracketed), the key every balancer and the EWMA dicts use.
function _M.endpoint_key(endpoint)
  local address = endpoint.address
  if address:find(":", 1, true) and string_byte(address, 1) ~= 91 then
    address = "[" .. address .. "]"
  end
  return address .. ":" .. tostring(endpoint.port)
end

--- Compiles an expression such as "$host$request_uri" or "user-${arg_user}" once (at sync
--- time) into the parts evaluate_var_template joins per request without regexes: literals at
--- odd indexes, variable names at even ones (the form route tables carry too).
function _M.compile_var_template(expression)
  local parts = { "" }
  local pos, len = 1, #(expression or "")
  while pos <= len do
    local s, e, braced = expression:find("^%${([%w_]+)}", pos)
    local name = braced
    if not s then
      s, e, name = expression:find("^%$([%w_]+)", pos)
    end
    if s then
      parts[#parts + 1] = name
      parts[#parts + 1] = ""
      pos = e + 1
    else
      local next_dollar = expression:find("$", pos + 1, true) or (len + 1)
      parts[#parts] = parts[#parts] .. expression:sub(pos, next_dollar - 1)
      pos = next_dollar
    end
  end
  return parts
end

--- A value as NGINX evaluates a quoted argument with variables: the parts of
--- compile_var_template, a missing variable empty.
function _M.evaluate_var_template(parts)
  local n = #parts
  if n == 1 then return parts[1] end
  local var = ngx.var
  local out = {}
  for i = 1, n, 2 do
    out[i] = parts[i]
    if i < n then out[i + 1] = var[parts[i + 1]] or "" end
  end
  return table.concat(out)
end

-- Control bytes a header value must not carry (tab may), and what a request line must not
-- carry (white space too), each replaced by %XX: the escape lua-nginx-module applies to a header
-- set through ngx.header, so a value reads the same from a location (src/render/header-values.ts
-- calls these) and from the router.
local HEADER_UNSAFE = "[%z\1-\8\10-\31\127]"
local URL_UNSAFE = "[%z\1-\32\127]"

local function percent(c)
  return string.format("%%%02X", string_byte(c))
end

--- A value for a header: CR, LF, NUL and the other control bytes but tab as %XX.
function _M.header_value(s)
  if s == nil or not s:find(HEADER_UNSAFE) then return s end
  return (s:gsub(HEADER_UNSAFE, percent))
end

--- A value for a request line (a URL): control bytes, space and tab as %XX.
function _M.url_value(s)
  if s == nil or not s:find(URL_UNSAFE) then return s end
  return (s:gsub(URL_UNSAFE, percent))
end

--- The ngx.var name of a request header: "X-Canary" → "http_x_canary".
function _M.header_var_name(header)
  return "http_" .. header:lower():gsub("-", "_")
end

function _M.deep_equal(a, b)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then return false end
  for k, v in pairs(a) do
    if not _M.deep_equal(v, b[k]) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

--- Same endpoints in the same order?
--- Keeps a hashing balancer's `upstream-hash-by` expression and its compiled form current.
function _M.sync_hash_by(balancer, backend)
  local hash_by = backend.upstreamHashByConfig["upstream-hash-by"]
  if hash_by ~= balancer.hash_by or balancer.key_parts == nil then
    balancer.hash_by = hash_by
    balancer.key_parts = _M.compile_var_template(hash_by)
  end
end

function _M.same_endpoints(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do
    if a[i].key ~= b[i].key then return false end
  end
  return true
end

--- Queues a Set-Cookie value chosen in the balancer phase; balancer.header_filter() emits it,
--- since response headers are only reliably editable in the header filter.
function _M.queue_response_cookie(cookie)
  ngx.ctx.pending_set_cookie = cookie
end

function _M.flush_response_cookie(ctx)
  local cookie = ctx.pending_set_cookie
  if not cookie then return end
  ctx.pending_set_cookie = nil
  local existing = ngx.header["Set-Cookie"]
  if existing == nil then
    ngx.header["Set-Cookie"] = cookie
  elseif type(existing) == "table" then
    existing[#existing + 1] = cookie
    ngx.header["Set-Cookie"] = existing
  else
    ngx.header["Set-Cookie"] = { existing, cookie }
  end
end

return _M
