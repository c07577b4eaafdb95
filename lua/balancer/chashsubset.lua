-- Consistent hashing onto subsets (`upstream-hash-by-subset`): the endpoints are grouped into
-- subsets of `upstream-hash-by-subset-size`, a key maps to one subset, and a random endpoint of
-- that subset serves the request.
local util = require("util")
local ring = require("balancer.ring")

local DEFAULT_SUBSET_SIZE = 3

local _M = { name = "chashsubset" }
_M.__index = _M

local function build(self, backend)
  local sorted = {}
  for i, endpoint in ipairs(backend.endpoints) do sorted[i] = endpoint end
  table.sort(sorted, function(a, b) return a.key < b.key end)

  local size = math.min(self.subset_size, #sorted)
  local count = math.ceil(#sorted / size)
  local subsets, ids = {}, {}
  for s = 1, count do
    local members = {}
    for m = 1, size do
      -- The last subset is topped up from the start so every subset has `size` members.
      members[m] = sorted[((s - 1) * size + m - 1) % #sorted + 1]
    end
    subsets[s] = members
    ids[s] = "subset-" .. s
  end
  self.endpoints = backend.endpoints
  self.subsets = subsets
  self.ring = ring.new(ids)
end

local function subset_size(backend)
  local size = tonumber(backend.upstreamHashByConfig["upstream-hash-by-subset-size"])
  if not size or size < 1 then return DEFAULT_SUBSET_SIZE end
  return math.floor(size)
end

function _M.new(self, backend)
  local o = setmetatable({ subset_size = subset_size(backend) }, self)
  util.sync_hash_by(o, backend)
  build(o, backend)
  return o
end

function _M.sync(self, backend)
  util.sync_hash_by(self, backend)
  local size = subset_size(backend)
  if size ~= self.subset_size or not util.same_endpoints(self.endpoints, backend.endpoints) then
    self.subset_size = size
    build(self, backend)
  end
end

function _M.balance(self)
  local key = util.evaluate_var_template(self.key_parts)
  local members = self.subsets[self.ring:find(key)]
  return members[math.random(#members)]
end

return _M
