-- $req_id for a request that brings no X-Request-ID, without a RAND_bytes call per request.
--
-- nginx.conf's `map $http_x_request_id $req_id` falls back to NGINX's $request_id: 16 bytes of
-- OpenSSL's RAND_bytes as 32 hex digits, one call per request (~6.6k instructions with OpenSSL 3,
-- most of it the DRBG's set-up per call). Here each worker draws 256 ids' worth of RAND_bytes at
-- once and hands them out in order: the same generator and the same form (32 hex digits, 16
-- bytes of its output each, never reused), written into $irx_req_id in the first rewrite phase
-- of a request, before anything reads it. $req_id's map still prefers the client's X-Request-ID
-- (no header read here), and $irx_req_id's map gives NGINX's $request_id wherever no Lua
-- rewrite ran (redirects, denied locations, the default server's own answers).
--
-- The renderer turns this on only where nothing else reads $request_id (which would then differ
-- from $req_id) and $req_id is read only after the rewrite phase (the X-Request-ID proxy header,
-- log formats): src/render/request-id.ts.
local ffi = require("ffi")
local base = require("resty.core.base")
require("resty.core.var") -- declares ngx_http_lua_ffi_var_set
local C = ffi.C
local ngx = ngx
local get_request = base.get_request

-- Each on its own: another module may have declared one of them already.
pcall(ffi.cdef, "int RAND_bytes(unsigned char *buf, int num);")
pcall(ffi.cdef, "unsigned char *ngx_hex_dump(unsigned char *dst, unsigned char *src, size_t len);")

local _M = {}

local IDS = 256
local BYTES = 16 * IDS
local HEX = 2 * BYTES
local ID = 32

-- The variable is written straight from the pool's bytes (what ngx.var's own setter calls, with
-- no Lua string made per id): NGINX copies the 32 digits into the request's pool.
local NAME = "irx_req_id"
local ERR_BUF_SIZE = 256
local name_buf = ffi.new("unsigned char[?]", #NAME + ERR_BUF_SIZE)
local err_buf = name_buf + #NAME
local err_len = ffi.new("size_t[1]")

local enabled = false
-- The ids not handed out yet, as hex digits, and the offset of the next one. Filled at this
-- worker's first request, after the fork, so that no two workers (nor the master) share it.
local pool = nil
local next_at = HEX

local function refill()
  local raw = ffi.new("unsigned char[?]", BYTES)
  pool = pool or ffi.new("unsigned char[?]", HEX)
  if C.RAND_bytes(raw, BYTES) ~= 1 then return false end
  C.ngx_hex_dump(pool, raw, BYTES)
  ffi.fill(raw, BYTES)
  next_at = 0
  return true
end

--- Set once in init_by_lua: whether $req_id is written here (the renderer's decision).
function _M.configure(on)
  enabled = on == true
end

--- balancer.rewrite() calls it: the rewrite phase of a static location and of a route the
--- router applies. Only a main request draws an id: an internal redirect keeps the one its
--- request was given (NGINX keeps variables across it), a subrequest shares its parent's.
function _M.assign()
  if not enabled or ngx.req.is_internal() then return end
  if next_at >= HEX and not refill() then return end -- RAND_bytes failed: the map's $request_id
  local id = pool + next_at
  err_len[0] = ERR_BUF_SIZE
  if C.ngx_http_lua_ffi_var_set(get_request(), NAME, #NAME, name_buf, id, ID, err_buf, err_len) ~= 0 then
    ngx.log(ngx.ERR, "request id: ", ffi.string(err_buf, err_len[0]))
  end
  -- Handed out: not kept in the worker's memory.
  ffi.fill(id, ID)
  next_at = next_at + ID
end

return _M
