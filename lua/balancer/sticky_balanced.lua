-- Cookie affinity, mode "balanced" (the default). See balancer/sticky.lua for the behaviour.
local sticky = require("balancer.sticky")

local _M = sticky.implementation("sticky_balanced")
_M.balance = sticky.balance

return _M
