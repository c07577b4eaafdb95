-- The header, query parameter and method conditions of a dynamic route (route-table field
-- `when`: src/model/core/types.ts RouteConditions, from HTTPRoute matches). Routes of one match
-- (path and type) with conditions are chained in the order the model gives (the Gateway API's
-- precedence): the router takes the first whose conditions hold, else goes on to shorter
-- prefixes. A host with such routes is matched on every request (its matches depend on more
-- than the URI, so the router's memo does not keep them); other hosts are not affected.
local pcre2 = require("pcre2")
local ngx = ngx
local type = type

local _M = {}

local function compile_list(list)
  if type(list) ~= "table" or #list == 0 then return nil end
  for i = 1, #list do
    local m = list[i]
    if m.type == "RegularExpression" then
      local code, err = pcre2.compile(m.value, false)
      if not code then return nil, m.value:sub(1, 100) .. ": " .. err end
      m.code = code
    end
  end
  return list
end

--- At table compile time: true when the entry has conditions (or nil and why one does not compile).
function _M.compile(e)
  local w = e.when
  if type(w) ~= "table" then
    e.when = nil -- JSON null: absent
    return false
  end
  if w.method == "" then w.method = nil end
  local err
  w.headers, err = compile_list(w.headers)
  if err then return nil, "header match " .. err end
  w.query, err = compile_list(w.query)
  if err then return nil, "query match " .. err end
  return true
end

-- Whether value v (a string, a list of repeated values: the first is tested, or nil) passes m.
local function passes(m, v)
  if type(v) == "table" then v = v[1] end
  if v == true then v = "" end -- a query parameter without `=`
  if type(v) ~= "string" then return false end
  if m.code then return pcre2.find(m.code, v) == true end
  return v == m.value
end

-- Whether every test of list passes on values (name → value).
local function all_pass(list, values)
  for i = 1, #list do
    if not passes(list[i], values[list[i].name]) then return false end
  end
  return true
end

--- Whether the request meets conditions w (its headers and arguments read once per request).
local function holds(w, seen)
  if w.method and ngx.req.get_method() ~= w.method then return false end
  if w.headers then
    seen.headers = seen.headers or ngx.req.get_headers(100)
    if not all_pass(w.headers, seen.headers) then return false end
  end
  if w.query then
    seen.args = seen.args or ngx.req.get_uri_args(100)
    if not all_pass(w.query, seen.args) then return false end
  end
  return true
end

--- The first route of chain `chain` (routes of one match, in precedence order) whose conditions
--- the request meets, or nil.
function _M.pick(chain, seen)
  for i = 1, #chain do
    local e = chain[i]
    if not e.when or holds(e.when, seen) then return e end
  end
  return nil
end

return _M
