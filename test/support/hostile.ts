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

/**
 * Spellings of node-local addresses a tenant can write into an EndpointSlice or an ExternalName:
 * [spelling, canonical spelling, class]. The model and lua/address_policy.lua must both read them so.
 */
export const NODE_LOCAL_SPELLINGS: ReadonlyArray<[string, string, string]> = [
  ['127.0.0.1', '127.0.0.1', 'loopback'],
  ['127.000.000.001', '127.0.0.1', 'loopback'],
  ['0177.0.0.1', '127.0.0.1', 'loopback'],
  ['2130706433', '127.0.0.1', 'loopback'],
  ['0x7f000001', '127.0.0.1', 'loopback'],
  ['0X7F.1', '127.0.0.1', 'loopback'],
  ['127.1', '127.0.0.1', 'loopback'],
  ['127.0.1', '127.0.0.1', 'loopback'],
  ['127.0.0.1.', '127.0.0.1', 'loopback'],
  ['127.255.255.254', '127.255.255.254', 'loopback'],
  ['0.0.0.0', '0.0.0.0', 'unspecified'],
  ['0', '0.0.0.0', 'unspecified'],
  ['00.0.0.0', '0.0.0.0', 'unspecified'],
  ['::', '::', 'unspecified'],
  ['0:0:0:0:0:0:0:0', '::', 'unspecified'],
  ['::1', '::1', 'loopback'],
  ['[::1]', '::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', '::1', 'loopback'],
  ['0000:0000::0001', '::1', 'loopback'],
  ['::ffff:127.0.0.1', '::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', '::ffff:127.0.0.1', 'loopback'],
  ['::FFFF:7F00:0001', '::ffff:127.0.0.1', 'loopback'],
  ['[::ffff:0.0.0.0]', '::ffff:0.0.0.0', 'unspecified'],
  ['::127.0.0.1', '::7f00:1', 'loopback'],
  ['::ffff:0:127.0.0.1', '::ffff:0:7f00:1', 'loopback'],
  ['169.254.169.254', '169.254.169.254', 'link-local'],
  ['0xa9fea9fe', '169.254.169.254', 'link-local'],
  ['0251.0376.0251.0376', '169.254.169.254', 'link-local'],
  ['::ffff:169.254.169.254', '::ffff:169.254.169.254', 'link-local'],
  ['fe80::1', 'fe80::1', 'link-local'],
  ['FE80::1%eth0', 'fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'febf:ffff::1', 'link-local'],
];
