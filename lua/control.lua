-- The control server's second lock: the controller writes a random token (mode 0600) into the
-- prefix at every start; init_by_lua reads it here, in the master, and every request to the
-- control server must carry it ("Authorization: Bearer <token>") before any handler runs.
-- The token is never in nginx.conf, which the control server itself serves.
local ngx = ngx

local _M = {}

local MIN_TOKEN_LENGTH = 32

local token = nil

--- Reads the token file. Without a usable token the control server refuses every request
--- (`nginx -t` of an offline render has none, and needs none).
function _M.load_token(path)
  token = nil
  local file = io.open(path, "rb")
  if not file then return false end
  local text = file:read("*a") or ""
  file:close()
  local value = text:match("^%s*(%x+)%s*$")
  if value and #value >= MIN_TOKEN_LENGTH then token = value end
  return token ~= nil
end

--- access_by_lua of the control server. LuaJIT interns strings, so `==` compares the two
--- strings without a byte loop that returns early.
function _M.authorize()
  if not token then
    ngx.log(ngx.ERR, "control server: no token was loaded at start; refusing ", ngx.var.request_uri)
    return ngx.exit(ngx.HTTP_SERVICE_UNAVAILABLE)
  end
  local header = ngx.var.http_authorization
  if header ~= "Bearer " .. token then
    ngx.header["WWW-Authenticate"] = "Bearer"
    return ngx.exit(ngx.HTTP_UNAUTHORIZED)
  end
end

return _M
