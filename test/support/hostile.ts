// Hostile input values for parser, render and e2e tests: each tries to break out of an NGINX
// string, directive or block, or to smuggle something in through size or control characters.

export interface HostileValue {
  name: string;
  value: string;
}

export const HOSTILE_VALUES: readonly HostileValue[] = [
  { name: 'semicolon', value: 'x; return 200 pwned' },
  { name: 'open brace', value: 'x { deny all' },
  { name: 'close brace', value: 'x } server { listen 81' },
  { name: 'double quote', value: 'x" ; return 200 "pwned' },
  { name: 'single quote', value: "x' ; return 200 'pwned" },
  { name: 'newline', value: 'x\nreturn 200 pwned;' },
  { name: 'carriage return', value: 'x\r\nreturn 200 pwned;' },
  { name: 'dollar', value: '$request_body' },
  { name: 'dollar brace', value: '${host}' },
  { name: 'backslash', value: 'x\\' },
  { name: 'backslash quote', value: 'x\\"y' },
  { name: 'NUL', value: 'x\u0000y' },
  { name: 'tab', value: 'x\ty' },
  { name: 'lua block', value: '"; content_by_lua_block { os.execute("id") } #' },
  { name: 'include', value: 'a; include /etc/passwd; #' },
  { name: 'block escape', value: '/ok;\n}\nserver { listen 9999; location / { return 200 pwned; } }\n#' },
  { name: 'url with injection', value: 'http://example.com/;return 200 pwned' },
  { name: 'cidr with injection', value: '10.0.0.0/8; allow all' },
  { name: 'header with injection', value: 'X-Ok\r\nX-Evil: 1' },
  { name: 'very long', value: 'a'.repeat(100 * 1024) },
  { name: 'very long list', value: Array.from({ length: 20_000 }, () => '1.2.3.4').join(',') },
];

/** Characters that would end or escape an NGINX string or directive if rendered unescaped. */
export const NGINX_BREAKING = /["';{}\\]|[\u0000-\u001f\u007f]/;

/**
 * Whether a typed string value is safe to put into nginx.conf: no breaking characters, `$` only
 * in `$name` variables or `$1` capture references, and a bounded length.
 */
export function isNginxSafe(value: string, opts: { maxLength?: number; regex?: boolean } = {}): boolean {
  if (value.length > (opts.maxLength ?? 4096)) return false;
  // A regular expression may hold backslash escapes, but never a lone trailing backslash.
  const checked = opts.regex ? value.replace(/\\[^"'\u0000-\u001f]/g, '') : value;
  if (NGINX_BREAKING.test(checked)) return false;
  if (opts.regex) return true; // `$` is an anchor there
  return !/\$(?![A-Za-z_][A-Za-z0-9_]*|\d)/.test(value);
}

/** Every string inside a value (deeply), with its path. */
export function stringsIn(value: unknown, path = '$'): Array<{ path: string; value: string }> {
  if (typeof value === 'string') return [{ path, value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringsIn(v, `${path}[${i}]`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => stringsIn(v, `${path}.${k}`));
  }
  return [];
}
