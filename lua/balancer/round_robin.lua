-- Round robin over a backend's endpoints: each worker walks the list in order, so N requests
-- through one worker split exactly evenly.
local util = require("util")

local _M = { name = "round_robin" }
_M.__index = _M

function _M.new(self, backend)
  local o = setmetatable({ endpoints = backend.endpoints, last = 0 }, self)
  return o
end

function _M.sync(self, backend)
  if util.same_endpoints(self.endpoints, backend.endpoints) then return end
  self.endpoints = backend.endpoints
  self.last = self.last % #self.endpoints
end

function _M.balance(self)
  local n = #self.endpoints
  self.last = self.last % n + 1
  return self.endpoints[self.last]
end

return _M
