-- A consistent-hash ring (crc32, virtual nodes): adding a member moves only the keys that now
-- belong to it. Points are packed as hash * 2^20 + member index so one numeric sort builds it.
local ngx = ngx
local floor = math.floor

local VIRTUAL_NODES = 160
local INDEX_SPACE = 1048576 -- 2^20 members at most; hash (< 2^32) * 2^20 stays exact in a double

local _M = {}
_M.__index = _M

--- `ids` are the members' stable names (endpoint keys, subset names).
function _M.new(ids)
  local points = {}
  for index, id in ipairs(ids) do
    for v = 1, VIRTUAL_NODES do
      points[#points + 1] = ngx.crc32_long(id .. "#" .. v) * INDEX_SPACE + index
    end
  end
  table.sort(points)
  return setmetatable({ points = points }, _M)
end

--- The member index owning `key`: the first point at or after the key's hash, wrapping.
function _M.find(self, key)
  local points = self.points
  local n = #points
  if n == 0 then return nil end
  local target = ngx.crc32_long(key) * INDEX_SPACE
  local lo, hi = 1, n
  if points[n] < target then return points[1] % INDEX_SPACE end
  while lo < hi do
    local mid = floor((lo + hi) / 2)
    if points[mid] < target then lo = mid + 1 else hi = mid end
  end
  return points[lo] % INDEX_SPACE
end

return _M
