-- rewrite-target of a dynamic route, applied as the host's static location applies its
-- `rewrite <regex> <target> break` (NGINX's rewrite module and proxy module, 1.22): the regex is
-- matched on $uri; `$1`..`$9` are its captures; the first `?` of the target starts the new
-- arguments (the request's are appended after `&`, unless the target ends in `?`); a capture in
-- the arguments is escaped when the request URI had `%` or `+` before anything made NGINX parse
-- it the long way. The upstream then gets the new URI escaped as NGINX escapes a rewritten URI,
-- and `?` and the arguments. No match: nothing changes.
local pcre2 = require("pcre2")
local ngx = ngx
local byte, char, format, sub = string.byte, string.char, string.format, string.sub
local concat = table.concat
local ipairs, setmetatable, type = ipairs, setmetatable, type

local _M = {}

-- The bytes NGINX escapes in a URI (NGX_ESCAPE_URI) and in arguments (NGX_ESCAPE_ARGS).
local URI_ESCAPED = "[%z\1-\32\"#%%<>%?\\%^`{|}\127-\255]"
local ARGS_ESCAPED = "[%z\1-\32\"#%%&%+;<>%?\\%^`{|}\127-\255]"
local HEX = {}
for b = 0, 255 do HEX[char(b)] = format("%%%02X", b) end

-- Compiled rewrites, per entry of the current table (a new table brings new entries).
local compiled = setmetatable({}, { __mode = "k" })

-- The target as NGINX's script compiles it: literals and capture numbers, split at the first `?`.
local function parse_target(target)
  local add_args = true
  if sub(target, -1) == "?" then
    target = sub(target, 1, -2)
    add_args = false
  end
  local uri, args = {}, nil
  local cur = uri
  local i, n = 1, #target
  local lit = {}
  local function flush()
    if #lit > 0 then cur[#cur + 1] = concat(lit); lit = {} end
  end
  while i <= n do
    local c = sub(target, i, i)
    if c == "$" then
      local d = byte(target, i + 1)
      if not d or d < 49 or d > 57 then return nil, "a $ not followed by a capture number 1-9" end
      flush()
      cur[#cur + 1] = d - 48
      i = i + 2
    elseif c == "?" and args == nil then
      flush()
      args = {}
      cur = args
      i = i + 1
    else
      lit[#lit + 1] = c
      i = i + 1
    end
  end
  flush()
  return { uri = uri, args = args, add_args = add_args }
end

--- At table compile time (once per version per worker): nil, or why the entry's rewrite cannot be used.
function _M.compile(e)
  local rw = e.rewrite
  if type(rw) ~= "table" then return nil end
  local code, err = pcre2.compile(rw.regex, false)
  if not code then return "rewrite regex " .. sub(rw.regex, 1, 100) .. ": " .. err end
  local t
  t, err = parse_target(rw.target)
  if not t then return "rewrite-target " .. sub(rw.target, 1, 100) .. ": " .. err end
  t.code = code
  compiled[e] = t
  return nil
end

-- r->quoted_uri or r->plus_in_uri of NGINX's request-line parser: a `%` (or a `+`) in the path
-- before a `?`, `#`, `%`, or a `.` or `/` right after a `/` sends the parser down its slow path.
local function quoted_or_plus(request_uri)
  local after_slash = true
  local plus = false
  for i = 2, #request_uri do
    local c = byte(request_uri, i)
    if c == 37 then return true end
    if c == 63 or c == 35 then break end
    if after_slash and (c == 46 or c == 47) then break end
    if c == 43 then
      plus = true
    else
      after_slash = c == 47
    end
  end
  return plus
end

local function build(parts, subject, escape)
  local out = {}
  for i, p in ipairs(parts) do
    if type(p) == "number" then
      local cap = pcre2.capture(subject, p)
      if escape then cap = cap:gsub(ARGS_ESCAPED, HEX) end
      out[i] = cap
    else
      out[i] = p
    end
  end
  return concat(out)
end

--- After the redirects: rewrites the request as the location's rewrite would. `moved`: the
--- request was moved to the dynamic-route location, whose proxy_pass sends $dynamic_upstream_uri
--- (elsewhere a bare proxy_pass sends the rewritten $uri and $args as NGINX escapes them).
function _M.apply(e, uri, moved)
  local t = compiled[e]
  if t == nil then return end
  local ok, err = pcre2.find(t.code, uri)
  if ok == false then return end
  if ok == nil then
    ngx.log(ngx.ERR, "router: rewrite regex of ", ngx.var.host, ": ", err)
    return ngx.exit(ngx.HTTP_INTERNAL_SERVER_ERROR)
  end
  local var = ngx.var
  local new_uri = build(t.uri, uri, false)
  local request_args = var.args or ""
  local args
  if t.args then
    args = build(t.args, uri, quoted_or_plus(var.request_uri))
    if t.add_args and request_args ~= "" then args = args .. "&" .. request_args end
  else
    args = t.add_args and request_args or ""
  end
  if new_uri == "" then
    ngx.log(ngx.ERR, "router: the rewritten URI has a zero length")
    return ngx.exit(ngx.HTTP_INTERNAL_SERVER_ERROR)
  end
  _M.set_upstream_uri(new_uri, args, moved)
end

--- A URI as NGINX escapes a rewritten one.
function _M.escape(uri)
  return (uri:gsub(URI_ESCAPED, HEX))
end

--- The upstream gets new_uri (escaped) and args; `moved`: the request is in the router's
--- location, whose proxy_pass sends $dynamic_upstream_uri.
function _M.set_upstream_uri(new_uri, args, moved)
  if moved then ngx.var.dynamic_upstream_uri = _M.escape(new_uri) .. (args ~= "" and "?" .. args or "") end
  -- $uri and $args as after the rewrite (what logs and upstream-hash-by read); `binary`: control
  -- bytes a capture brings are NGINX's own as well.
  ngx.req.set_uri(new_uri, false, true)
  ngx.req.set_uri_args(args)
end

return _M
