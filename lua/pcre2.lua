-- Regular expressions as NGINX itself runs them: the PCRE2 library NGINX is linked with (ngx.re
-- here is PCRE1, whose syntax and semantics differ), compiled with the options of
-- ngx_regex_compile (none, or PCRE2_CASELESS for `~*`). Used by the route table, so a route's
-- regex matches in Lua exactly what its `location ~*` would match. Each match is bounded: a
-- pattern that backtracks past MATCH_LIMIT steps fails the request (NGINX answers 500 when PCRE
-- gives up, at its own, larger limit) and leaves the worker free.
local ffi = require("ffi")
local C = ffi.C
local ffi_gc, ffi_new, ffi_string = ffi.gc, ffi.new, ffi.string

ffi.cdef [[
typedef struct pcre2_real_code_8 pcre2_code_8;
typedef struct pcre2_real_match_data_8 pcre2_match_data_8;
typedef struct pcre2_real_match_context_8 pcre2_match_context_8;
pcre2_code_8 *pcre2_compile_8(const unsigned char *, size_t, uint32_t, int *, size_t *, void *);
void pcre2_code_free_8(pcre2_code_8 *);
int pcre2_jit_compile_8(pcre2_code_8 *, uint32_t);
int pcre2_match_8(const pcre2_code_8 *, const unsigned char *, size_t, size_t, uint32_t,
                  pcre2_match_data_8 *, pcre2_match_context_8 *);
pcre2_match_data_8 *pcre2_match_data_create_8(uint32_t, void *);
size_t *pcre2_get_ovector_pointer_8(pcre2_match_data_8 *);
pcre2_match_context_8 *pcre2_match_context_create_8(void *);
int pcre2_set_match_limit_8(pcre2_match_context_8 *, uint32_t);
int pcre2_get_error_message_8(int, unsigned char *, size_t);
]]

local CASELESS = 0x00000008
local JIT_COMPLETE = 0x00000001
local NO_JIT = 0x00002000
local ERROR_NOMATCH = -1
local ERROR_JIT_STACKLIMIT = -46
-- Backtracking steps a match may take (PCRE2's own default, which NGINX keeps, is 10,000,000).
local MATCH_LIMIT = 1000000
-- Captures kept: $1..$9 are all a rewrite can name.
local PAIRS = 10

local _M = { MATCH_LIMIT = MATCH_LIMIT }

-- One match data and context per worker: a match is never interrupted by another.
local match_data = C.pcre2_match_data_create_8(PAIRS, nil)
local match_context = C.pcre2_match_context_create_8(nil)
C.pcre2_set_match_limit_8(match_context, MATCH_LIMIT)
local ovector = C.pcre2_get_ovector_pointer_8(match_data)

local errcode = ffi_new("int[1]")
local erroffset = ffi_new("size_t[1]")

local function message(code)
  local buf = ffi_new("unsigned char[256]")
  local n = C.pcre2_get_error_message_8(code, buf, 256)
  return n > 0 and ffi_string(buf, n) or ("PCRE2 error " .. code)
end

-- This worker's compiled patterns (by flag and text) of its current and previous generation:
-- a route table mostly repeats the last one's patterns, and compiling them (JIT included) was
-- most of a table's compile time. A compiled code is never changed, so routes can share one.
local current, previous = {}, {}

--- A new route table is being compiled: patterns neither it nor the last one used are let go.
function _M.next_generation()
  previous, current = current, {}
end

--- A compiled pattern, or nil and the error. `caseless` as `~*`.
function _M.compile(pattern, caseless)
  local key = (caseless and "i:" or "c:") .. pattern
  local code = current[key] or previous[key]
  if code then
    current[key] = code
    return code
  end
  code = C.pcre2_compile_8(pattern, #pattern, caseless and CASELESS or 0, errcode, erroffset, nil)
  if code == nil then
    return nil, message(errcode[0]) .. " at offset " .. tonumber(erroffset[0])
  end
  code = ffi_gc(code, C.pcre2_code_free_8)
  -- JIT gives the same answers faster; a pattern it cannot take runs interpreted.
  C.pcre2_jit_compile_8(code, JIT_COMPLETE)
  current[key] = code
  return code
end

--- true when `subject` matches, false when not, or nil and the error (the limit reached).
function _M.find(code, subject)
  local rc = C.pcre2_match_8(code, subject, #subject, 0, 0, match_data, match_context)
  if rc == ERROR_JIT_STACKLIMIT then
    rc = C.pcre2_match_8(code, subject, #subject, 0, NO_JIT, match_data, match_context)
  end
  if rc >= 0 then return true end
  if rc == ERROR_NOMATCH then return false end
  return nil, message(rc)
end

--- After a successful find(): capture n (0 = the whole match), "" when it did not take part.
function _M.capture(subject, n)
  if n >= PAIRS then return "" end
  local from, to = ovector[2 * n], ovector[2 * n + 1]
  -- PCRE2_UNSET is ~0: an unset group.
  if from > to or to > #subject then return "" end
  return subject:sub(tonumber(from) + 1, tonumber(to))
end

return _M
