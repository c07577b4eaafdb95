-- The peer of a host an annotation names (a mirror target, an auth service kept alive), chosen
-- at the time it is dialled and judged by the upstream address policy (address_policy.lua): an
-- address in any spelling is read as NGINX would dial it, a name is resolved here (dns.lua), and
-- every answer is judged, so neither a literal nor a name nor a Host header leads to the node's
-- loopback, the controller's ports, link-local or metadata services. Names need cosockets: call resolve()
-- in a timer or in the rewrite, access or content phase.
local ngx = ngx
local address_policy = require("address_policy")
local dns = require("dns")

local _M = {}

-- A name address_policy would never confuse with an address, and dns.lua can ask for.
local function is_host_name(name)
  return #name <= 253 and name:find("^[%w][%w%-%.]*$") ~= nil and not name:find("..", 1, true)
end

local function judged(address, port, what)
  local parsed = address_policy.parse(address)
  if not parsed then return nil, what .. " is not an address" end
  local refused = address_policy.refusal(parsed, port, "external")
  if refused then return nil, what .. " is " .. refused end
  return parsed.address
end

--- The address to dial for host:port, or nil and why not.
function _M.resolve(host, port)
  if type(host) ~= "string" or host == "" then return nil, "no host" end
  if address_policy.parse(host) then return judged(host, port, host) end
  if address_policy.is_localhost_name(host) then return judged("127.0.0.1", port, host .. " (localhost)") end
  if not is_host_name(host) then return nil, "\"" .. host:sub(1, 64) .. "\" is not a host name" end
  local addresses = dns.lookup(host:lower())
  if #addresses == 0 then return nil, "cannot resolve " .. host end
  local why
  for _, a in ipairs(addresses) do
    local address, err = judged(a, port, host .. " resolves to " .. a .. ", which")
    if address then return address end
    why = err
  end
  return nil, why
end

--- Whether `host` is an IP address (in any spelling) rather than a name.
function _M.is_address(host)
  return address_policy.parse(host) ~= nil
end

--- `[v6]` for an IPv6 address (cosockets read a bare one as host:port), the address otherwise.
function _M.dial_address(address)
  if address:find(":", 1, true) then return "[" .. address .. "]" end
  return address
end

--- balancer_by_lua of an upstream whose peer the request chose earlier (ngx.ctx.external_peer,
--- e.g. by external_auth.choose_peer in the auth subrequest).
function _M.balance()
  local peer = ngx.ctx.external_peer
  if not peer then
    ngx.log(ngx.ERR, "no peer was chosen for this request")
    return ngx.exit(500)
  end
  local ok, err = require("ngx.balancer").set_current_peer(_M.dial_address(peer.address), peer.port)
  if not ok then
    ngx.log(ngx.ERR, "cannot set the peer ", peer.address, ":", peer.port, ": ", err)
    return ngx.exit(500)
  end
end

--- A logger that writes at most one line per `interval` seconds for each key (an internal
--- location: one tenant's noise never hides another's line) and counts the ones it held back:
--- a refusal a client can provoke on every request must not flood the error log. The line is
--- `<what> <key>: <message>`; keys are location names, so the table stays as small as the
--- configuration.
function _M.throttled_log(level, interval, what)
  local last, held = {}, {}
  return function(key, ...)
    local now = ngx.now()
    if now - (last[key] or 0) < interval then
      held[key] = (held[key] or 0) + 1
      return
    end
    last[key] = now
    local parts = { what, " ", tostring(key), ": " }
    for i = 1, select("#", ...) do parts[#parts + 1] = tostring((select(i, ...))) end
    if (held[key] or 0) > 0 then parts[#parts + 1] = " (" .. held[key] .. " more held back)" end
    ngx.log(level, table.concat(parts))
    held[key] = 0
  end
end

return _M
