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
  // `${name}` is a variable, as `$name` (the quoting filters print both as such or both literal).
  const unbraced = opts.regex ? value : value.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*\}/g, '$$x');
  const checked = opts.regex ? value.replace(/\\[^"'\u0000-\u001f]/g, '') : unbraced;
  if (NGINX_BREAKING.test(checked)) return false;
  if (opts.regex) return true; // `$` is an anchor there
  return !/\$(?![A-Za-z_][A-Za-z0-9_]*|\d)/.test(unbraced);
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
  ['169.254.169.254', '169.254.169.254', 'metadata'],
  ['0xa9fea9fe', '169.254.169.254', 'metadata'],
  ['0251.0376.0251.0376', '169.254.169.254', 'metadata'],
  ['::ffff:169.254.169.254', '::ffff:169.254.169.254', 'metadata'],
  ['169.254.20.10', '169.254.20.10', 'link-local'],
  ['fe80::1', 'fe80::1', 'link-local'],
  ['FE80::1%eth0', 'fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'febf:ffff::1', 'link-local'],
];

/**
 * Cloud metadata services by provider, and IPv4 addresses embedded in IPv6 ones (NAT64, 6to4,
 * Teredo, IPv4-compatible and -mapped), with ordinary addresses of the same forms:
 * [spelling, canonical spelling, class or null]. The model and lua/address_policy.lua must give
 * the same class to each. Tests judge these; none is ever dialled.
 */
export const METADATA_AND_EMBEDDED: ReadonlyArray<[string, string, string | null]> = [
  // AWS (IMDS over IPv6; ECS task credentials), Alibaba, Azure WireServer, Oracle Classic, Tencent, OpenStack over IPv6.
  ['fd00:ec2::254', 'fd00:ec2::254', 'metadata'],
  ['FD00:0EC2:0:0:0:0:0:0254', 'fd00:ec2::254', 'metadata'],
  ['[fd00:ec2::254]', 'fd00:ec2::254', 'metadata'],
  ['169.254.170.2', '169.254.170.2', 'metadata'],
  ['100.100.100.200', '100.100.100.200', 'metadata'],
  ['0x646464c8', '100.100.100.200', 'metadata'],
  ['::ffff:100.100.100.200', '::ffff:100.100.100.200', 'metadata'],
  ['168.63.129.16', '168.63.129.16', 'metadata'],
  ['192.0.0.192', '192.0.0.192', 'metadata'],
  ['169.254.0.23', '169.254.0.23', 'metadata'],
  ['fe80::a9fe:a9fe', 'fe80::a9fe:a9fe', 'metadata'],
  // NAT64, the well-known prefix (RFC 6052).
  ['64:ff9b::127.0.0.1', '64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b::7f00:1', '64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b::169.254.169.254', '64:ff9b::a9fe:a9fe', 'metadata'],
  ['64:ff9b::100.100.100.200', '64:ff9b::6464:64c8', 'metadata'],
  ['64:ff9b::0.0.0.0', '64:ff9b::', 'unspecified'],
  ['64:ff9b::169.254.1.1', '64:ff9b::a9fe:101', 'link-local'],
  ['64:ff9b::1.2.3.4', '64:ff9b::102:304', null],
  // NAT64, local use (RFC 8215): 127.0.0.1 at the /48, /56, /64 and /96 positions; 169.254.169.254 at /96.
  ['64:ff9b:1:7f00:0:100::', '64:ff9b:1:7f00:0:100::', 'loopback'],
  ['64:ff9b:1:7f:0:1::', '64:ff9b:1:7f:0:1::', 'loopback'],
  ['64:ff9b:1:0:7f:0:100:0', '64:ff9b:1:0:7f:0:100:0', 'loopback'],
  ['64:ff9b:1::7f00:1', '64:ff9b:1::7f00:1', 'loopback'],
  ['64:ff9b:1::a9fe:a9fe', '64:ff9b:1::a9fe:a9fe', 'metadata'],
  ['64:ff9b:1:102:3:400::', '64:ff9b:1:102:3:400::', null],
  ['64:ff9b:1::102:304', '64:ff9b:1::102:304', null],
  // 6to4 (RFC 3056).
  ['2002:7f00:1::', '2002:7f00:1::', 'loopback'],
  ['2002:a9fe:a9fe::1', '2002:a9fe:a9fe::1', 'metadata'],
  ['2002:6464:64c8:1::1', '2002:6464:64c8:1::1', 'metadata'],
  ['2002:102:304::1', '2002:102:304::1', null],
  // Teredo (RFC 4380): the client is the inverted last 32 bits; the server follows the prefix.
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', '2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
  ['2001:0:4136:e378:8000:63bf:5601:5601', '2001:0:4136:e378:8000:63bf:5601:5601', 'metadata'],
  ['2001:0:7f00:1::1', '2001:0:7f00:1::1', 'loopback'],
  ['2001:0:4136:e378:8000:63bf:fefd:fcfb', '2001:0:4136:e378:8000:63bf:fefd:fcfb', null],
  // IPv4-compatible and -mapped (the ones in NODE_LOCAL_SPELLINGS are loopback and unspecified).
  ['::169.254.169.254', '::a9fe:a9fe', 'metadata'],
  ['::ffff:0:169.254.169.254', '::ffff:0:a9fe:a9fe', 'metadata'],
  ['::ffff:1.2.3.4', '::ffff:1.2.3.4', null],
  // Near misses: ordinary addresses.
  ['fd00:ec2::255', 'fd00:ec2::255', null],
  ['100.100.100.201', '100.100.100.201', null],
  ['2001:db8::1', '2001:db8::1', null],
];
