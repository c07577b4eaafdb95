-- Consistent hashing by `upstream-hash-by`: the NGINX variable expression (e.g. $request_uri,
-- $arg_user) is evaluated per request and mapped onto a ring of endpoints.
local util = require("util")
local ring = require("balancer.ring")

local _M = { name = "chash" }
_M.__index = _M

local function build(self, backend)
  local ids = {}
  for i, endpoint in ipairs(backend.endpoints) do ids[i] = endpoint.key end
  self.endpoints = backend.endpoints
  self.ring = ring.new(ids)
end

function _M.new(self, backend)
  local hash_by = backend.upstreamHashByConfig["upstream-hash-by"]
  local o = setmetatable({ hash_by = hash_by, key_parts = util.compile_var_template(hash_by) }, self)
  build(o, backend)
  return o
end

function _M.sync(self, backend)
  local hash_by = backend.upstreamHashByConfig["upstream-hash-by"]
  if hash_by ~= self.hash_by then
    self.hash_by = hash_by
    self.key_parts = util.compile_var_template(hash_by)
  end
  if not util.same_endpoints(self.endpoints, backend.endpoints) then build(self, backend) end
end

function _M.balance(self)
  local key = util.evaluate_var_template(self.key_parts)
  return self.endpoints[self.ring:find(key)]
end

return _M
