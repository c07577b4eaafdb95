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
  local o = setmetatable({}, self)
  util.sync_hash_by(o, backend)
  build(o, backend)
  return o
end

function _M.sync(self, backend)
  util.sync_hash_by(self, backend)
  if not util.same_endpoints(self.endpoints, backend.endpoints) then build(self, backend) end
end

function _M.balance(self)
  local key = util.evaluate_var_template(self.key_parts)
  return self.endpoints[self.ring:find(key)]
end

return _M
