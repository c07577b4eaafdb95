-- Cookie affinity, mode "persistent". See balancer/sticky.lua for the behaviour.
local sticky = require("balancer.sticky")

local _M = sticky.implementation("sticky_persistent")
_M.balance = sticky.balance

return _M
