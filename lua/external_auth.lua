-- The peer of a tenant's auth service (auth-url), chosen under the upstream address policy in
-- the rewrite phase of the subrequest NGINX's auth_request makes (a subrequest skips the access
-- phase) and dialled by the balancer of the auth location's upstream (external_peer.balance),
-- which keeps connections with auth-keepalive. auth_request serves HTTP/1.1 and HTTP/2 requests
-- alike; lua-nginx-module refuses ngx.location.capture inside an HTTP/2 request.
local ngx = ngx
local external_peer = require("external_peer")

local _M = {}

local warn = external_peer.throttled_log(ngx.ERR, 1, "external auth")

--- opts: host (or host_from_request: the request's $host, as an auth-url of `http://$host/…`)
--- and port of the auth service. A host the policy refuses, or a name that does not resolve,
--- ends the subrequest with 500, which auth_request answers with 500.
function _M.choose_peer(location, opts)
  local host = opts.host
  if opts.host_from_request then host = ngx.var.host end
  local address, why = external_peer.resolve(host, opts.port)
  if not address then
    warn(location, why)
    return ngx.exit(ngx.HTTP_INTERNAL_SERVER_ERROR)
  end
  ngx.ctx.external_peer = { address = address, port = opts.port }
end

return _M
