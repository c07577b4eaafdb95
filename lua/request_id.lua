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
local C = ffi.C
local ngx = ngx
local string_sub = string.sub

-- Each on its own: another module may have declared one of them already.
pcall(ffi.cdef, "int RAND_bytes(unsigned char *buf, int num);")
pcall(ffi.cdef, "unsigned char *ngx_hex_dump(unsigned char *dst, unsigned char *src, size_t len);")

local _M = {}

local IDS = 256
local BYTES = 16 * IDS
local HEX = 2 * BYTES

local enabled = false
-- The ids not handed out yet, as hex, and where the next one starts. Nil until this worker's
-- first request: filled after the fork, so that no two workers (nor the master) share it.
local pool = nil
local next_at = HEX + 1

local function refill()
  local raw = ffi.new("unsigned char[?]", BYTES)
  local hex = ffi.new("unsigned char[?]", HEX)
  if C.RAND_bytes(raw, BYTES) ~= 1 then
    pool = nil
    return false
  end
  C.ngx_hex_dump(hex, raw, BYTES)
  pool = ffi.string(hex, HEX)
  ffi.fill(raw, BYTES)
  ffi.fill(hex, HEX)
  next_at = 1
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
  if next_at > HEX and not refill() then return end -- RAND_bytes failed: the map's $request_id
  ngx.var.irx_req_id = string_sub(pool, next_at, next_at + 31)
  next_at = next_at + 32
end

return _M
