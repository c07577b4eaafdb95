-- The fallback certificate ("Kubernetes Ingress Controller Fake Certificate") for handshakes
-- that no Secret's certificate matches. nginx.conf names it through variables, so NGINX loads no
-- certificate per server block; the master loads it here once per (re)load (the key may be
-- readable by root only) and the workers inherit it.
local ssl = require("ngx.ssl")
local ngx = ngx

local _M = {}

local cert, key

local function read(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local text = f:read("*a")
  f:close()
  return text
end

local function parse(cert_path, key_path)
  local pem, err = read(cert_path)
  if not pem then return nil, nil, err end
  local c, k
  c, err = ssl.parse_pem_cert(pem)
  if not c then return nil, nil, cert_path .. ": " .. tostring(err) end
  pem, err = read(key_path)
  if not pem then return nil, nil, err end
  k, err = ssl.parse_pem_priv_key(pem)
  if not k then return nil, nil, key_path .. ": " .. tostring(err) end
  return c, k
end

--- Loads the certificate and key; an error fails the (re)load and `nginx -t`, as an unreadable
--- ssl_certificate file would.
function _M.load(cert_path, key_path)
  local c, k, err = parse(cert_path, key_path)
  if not c then error("fallback certificate: " .. tostring(err)) end
  cert, key = c, k
  return _M
end

--- Sets the fallback certificate on the handshake; certificate.call() may replace it after.
--- A failure is logged only: a host with a certificate of its own is still served.
function _M.set()
  local ok, err = ssl.clear_certs()
  if ok then ok, err = ssl.set_cert(cert) end
  if ok then ok, err = ssl.set_priv_key(key) end
  if not ok then ngx.log(ngx.ERR, "cannot set the fallback certificate: ", err) end
end

return _M
