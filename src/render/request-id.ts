// Whether lua/request_id.lua may give $req_id its value (through $irx_req_id: a per-worker pool of
// RAND_bytes output instead of NGINX's $request_id, one call per 256 requests, not one per request). Only
// where that changes nothing anyone sees: nothing reads $request_id besides $req_id's map (it
// would differ from $req_id), and $req_id is read only after the rewrite phase that writes it.

/** Stands in init_by_lua for the decision, taken once the whole nginx.conf is known. */
export const REQUEST_ID_POOL_TOKEN = '\u0000@@ingress-rx-request-id-pool@@\u0000';

// A read of either variable: in NGINX's syntax, or by name from Lua code in a snippet.
const READ = /(?:\$\{?|\bvar\.|\bvar\[\s*["'])(request_id|req_id)\b/g;
// The lines that may read them: the maps of $req_id and $irx_req_id (the pool's variable, NGINX's
// $request_id until lua/request_id.lua writes it), the X-Request-ID header sent upstream (the
// content phase), a log format (the log phase).
const MAP_LINE = /^\s*map \$http_x_request_id \$req_id \{\s*$/;
const POOL_MAP = /^\s*map "" \$irx_req_id \{\n\s*default \$request_id;\s*$/;
const LATE_REQ_ID_LINE = /^\s*(?:(?:proxy|grpc)_set_header X-Request-ID \$req_id;|log_format )/;

/** Whether `text` (a part of nginx.conf) reads $request_id or $req_id where the pool would change what it reads. */
export function readsRequestIdElsewhere(text: string): boolean {
  READ.lastIndex = 0;
  for (let m = READ.exec(text); m !== null; m = READ.exec(text)) {
    const start = text.lastIndexOf('\n', m.index) + 1;
    const end = text.indexOf('\n', m.index);
    const line = text.slice(start, end < 0 ? text.length : end);
    if (/^\s*#/.test(line)) continue;
    if (m[1] === 'req_id' && MAP_LINE.test(line)) continue;
    if (m[1] === 'request_id' && POOL_MAP.test(text.slice(text.lastIndexOf('\n', start - 2) + 1, end < 0 ? text.length : end))) continue;
    if (m[1] === 'req_id' && LATE_REQ_ID_LINE.test(line)) continue;
    return true;
  }
  return false;
}
