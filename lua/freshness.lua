-- Each worker keeps its own decoded copies of what the controller posts (backends, the hosts
-- holding a certificate) and takes up a new post on a 0.1 s timer. Between a POST and that tick
-- the workers answered from different states, so a client saw a change and then, on another
-- connection, the state before it. One shared-dict read at the start of every proxied request
-- closes that gap: the first request a worker serves after a post runs the listeners first.
local configuration = require("configuration")

local _M = {}

local seen = -1
local listeners = {}

--- `fn()` runs in the worker whenever the posted generation moved since it last ran.
function _M.on_change(fn)
  listeners[#listeners + 1] = fn
end

--- Runs the listeners when something was posted since this worker last looked; returns the
--- generation it is at.
function _M.catch_up()
  local generation = configuration.get_generation()
  if generation ~= seen then
    seen = generation
    for i = 1, #listeners do listeners[i]() end
  end
  return generation
end

return _M
