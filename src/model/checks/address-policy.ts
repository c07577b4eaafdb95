// The upstream address policy: endpoint addresses and ExternalName targets are normalised from
// every spelling a resolver or NGINX accepts, IPv4 addresses embedded in IPv6 ones (mapped,
// compatible, NAT64, 6to4, Teredo) are unwrapped, then refused when they point back at the node
// (loopback, unspecified), at link-local services or at a cloud's metadata service, unless the
// operator allows that class. lua/address_policy.lua applies the same rules to what DNS answers
// at request time; test/support/hostile.ts holds the table both are checked against.

export type AddressClass = 'loopback' | 'unspecified' | 'link-local' | 'metadata';

export const ADDRESS_CLASSES: readonly AddressClass[] = ['loopback', 'unspecified', 'link-local', 'metadata'];

/**
 * Cloud metadata and platform services, by the address each provider documents (docs/security.md
 * lists the source of each). They are the class `metadata` even inside link-local, so that
 * allowing link-local (a node-local DNS cache on 169.254.20.10) does not open them.
 */
const METADATA_IPV4: ReadonlySet<number> = new Set([
  '169.254.169.254', // AWS, GCP, Azure, Oracle Cloud, DigitalOcean, OpenStack, Hetzner, Huawei
  '169.254.170.2', // AWS ECS task metadata and credentials
  '169.254.0.23', // Tencent Cloud (metadata.tencentyun.com)
  '100.100.100.200', // Alibaba Cloud
  '168.63.129.16', // Azure WireServer (guest agent configuration)
  '192.0.0.192', // Oracle Cloud Classic
].map((a) => ipv4Number(a.split('.').map(Number))));
function ipv4Number(b: readonly number[]): number {
  return ((b[0]! * 256 + b[1]!) * 256 + b[2]!) * 256 + b[3]!;
}

const METADATA_IPV6: ReadonlySet<string> = new Set([
  'fd00:ec2::254', // AWS (Nitro instances over IPv6)
  'fe80::a9fe:a9fe', // OpenStack over IPv6
]);

export interface AddressPolicy {
  /** Node-local classes allowed as upstreams (none by default). */
  allow: ReadonlySet<AddressClass>;
  /**
   * The controller's own listening ports: refused on loopback and unspecified addresses even
   * where those are allowed (local mode), so no Ingress routes into the controller or NGINX itself.
   */
  ownPorts: ReadonlySet<number>;
  /**
   * Of the own ports, those serving the data plane to anyone (NGINX's HTTP and HTTPS, Gateway
   * listeners): a tenant's snippet may loop back to them, as ingress-nginx's stream-snippet e2e
   * does (default: 80 and 443). Endpoints never may (a loop).
   */
  dataPlanePorts?: ReadonlySet<number>;
  /**
   * The addresses of the controller's own pod (POD_IP, its interfaces'; --own-addresses), in
   * canonical spelling (ownAddressSet): the own ports are refused on them as on loopback, whatever
   * their class, since from NGINX they reach the same listeners.
   */
  ownAddresses?: ReadonlySet<string>;
  /**
   * --disable-svc-external-name: an ExternalName Service gives no endpoint (its backends answer
   * 503, as ingress-nginx's), named among the refused addresses.
   */
  refuseExternalNameServices?: boolean;
}

export const STRICT_ADDRESS_POLICY: AddressPolicy = { allow: new Set(), ownPorts: new Set() };

export interface ParsedAddress {
  family: 4 | 6;
  /** The one spelling NGINX is given: dotted decimal, or RFC 5952 IPv6 (with its zone, if any). */
  canonical: string;
  /** The class that decides, null for an ordinary address. */
  class: AddressClass | null;
}

/** One IPv4 part as inet_aton reads it: 0x… hexadecimal, 0… octal, else decimal. */
function ipv4Part(p: string): number | null {
  if (/^0[xX][0-9a-fA-F]+$/.test(p)) return p.length > 10 ? null : parseInt(p.slice(2), 16);
  if (/^0[0-7]*$/.test(p)) return p.length > 12 ? null : parseInt(p, 8);
  if (/^[1-9][0-9]*$/.test(p)) return p.length > 10 ? null : Number(p);
  return null;
}

/** inet_aton's IPv4 forms: a.b.c.d, a.b.c (c: 16 bits), a.b (b: 24 bits), a (32 bits). */
function parseIPv4(s: string): number[] | null {
  const parts = s.split('.');
  if (parts.length > 4) return null;
  const values: number[] = [];
  for (const p of parts) {
    const v = ipv4Part(p);
    if (v === null) return null;
    values.push(v);
  }
  const lastBits = 8 * (5 - values.length);
  const last = values.pop()!;
  if (values.some((v) => v > 255) || last >= 2 ** lastBits) return null;
  const bytes = [...values];
  for (let shift = lastBits - 8; shift >= 0; shift -= 8) bytes.push(Math.floor(last / 2 ** shift) % 256);
  return bytes;
}

/** Eight 16-bit groups, an embedded dotted IPv4 allowed at the end; null if not IPv6. */
function parseIPv6(s: string): number[] | null {
  if (!/^[0-9a-fA-F:.]+$/.test(s)) return null;
  let text = s;
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (lastColon < 0) return null;
  if (text.slice(lastColon + 1).includes('.')) {
    // Only strict dotted decimal here, as inet_pton reads it.
    const v4 = text.slice(lastColon + 1).split('.');
    if (v4.length !== 4 || v4.some((p) => !/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255)) return null;
    tail.push(Number(v4[0]) * 256 + Number(v4[1]), Number(v4[2]) * 256 + Number(v4[3]));
    text = `${text.slice(0, lastColon + 1)}x`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string): string[] => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const words: number[] = [];
  const read = (list: string[]): boolean => {
    for (const g of list) {
      if (g === 'x') { words.push(...tail); continue; }
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return false;
      words.push(parseInt(g, 16));
    }
    return true;
  };
  if (!read(head)) return null;
  const before = words.length;
  if (!read(rest)) return null;
  if (halves.length === 2) {
    const missing = 8 - words.length;
    if (missing < 1) return null;
    words.splice(before, 0, ...new Array<number>(missing).fill(0));
  }
  return words.length === 8 ? words : null;
}

function ipv4Class(b: readonly number[]): AddressClass | null {
  return ipv4NumberClass(ipv4Number(b));
}

/** The class of an IPv4 address given as its 32-bit number (ipv4Number). */
function ipv4NumberClass(n: number): AddressClass | null {
  if (METADATA_IPV4.has(n)) return 'metadata';
  const first = Math.floor(n / 0x1000000);
  if (first === 127) return 'loopback';
  if (first === 0) return 'unspecified';
  if (first === 169 && Math.floor(n / 0x10000) % 256 === 254) return 'link-local';
  return null;
}

/** The 16 bytes of eight 16-bit words. */
function bytesOf(w: readonly number[]): number[] {
  return w.flatMap((x) => [x >> 8, x & 0xff]);
}

/**
 * RFC 6052's IPv4 inside an IPv6 prefix of `bits` (48..96): four bytes from the prefix's end, the
 * `u` byte (8) skipped; null when the address is not of that form (`u` and the suffix are zero).
 */
function rfc6052IPv4(b: readonly number[], bits: number): number[] | null {
  const out: number[] = [];
  let i = bits / 8;
  for (; out.length < 4; i++) if (i !== 8) out.push(b[i]!);
  return (bits < 64 ? [8] : []).concat(Array.from({ length: 16 - i }, (_, k) => i + k)).every((k) => b[k] === 0) ? out : null;
}

/**
 * Every IPv4 address an IPv6 address carries to where it is dialled: IPv4-mapped (::ffff:a.b.c.d),
 * -translated (::ffff:0:a.b.c.d), -compatible (::a.b.c.d, :: itself); NAT64 (RFC 6052's
 * 64:ff9b::/96, and RFC 8215's local-use 64:ff9b:1::/48 read at each prefix length RFC 6052
 * allows in it, an IPv4 address in 0.0.0.0/8 being no NAT64 destination); 6to4 (2002::/16,
 * RFC 3056); Teredo (2001::/32, RFC 4380: the server, and the client with its bits inverted).
 */
function embeddedIPv4(w: readonly number[]): number[][] {
  const zeroUpTo = (n: number) => w.slice(0, n).every((x) => x === 0);
  const b = bytesOf(w);
  const tail = b.slice(12);
  if ((zeroUpTo(5) && w[5] === 0xffff) || (zeroUpTo(4) && w[4] === 0xffff && w[5] === 0) || zeroUpTo(6)) return [tail];
  if (w[0] === 0x64 && w[1] === 0xff9b) {
    if (w.slice(2, 6).every((x) => x === 0)) return [tail];
    if (w[2] === 1) return [48, 56, 64, 96].map((bits) => rfc6052IPv4(b, bits)).filter((v): v is number[] => v !== null && v[0] !== 0);
  }
  if (w[0] === 0x2002) return [b.slice(2, 6)];
  if (w[0] === 0x2001 && w[1] === 0) return [b.slice(4, 8), tail.map((x) => x ^ 0xff)];
  return [];
}

/** When an address carries several IPv4 addresses, the class least often allowed decides. */
const CLASS_ORDER: readonly AddressClass[] = ['metadata', 'unspecified', 'link-local', 'loopback'];

function ipv6Class(w: readonly number[]): AddressClass | null {
  if (METADATA_IPV6.has(formatIPv6(w))) return 'metadata';
  if (w.slice(0, 7).every((x) => x === 0) && w[7] === 1) return 'loopback';
  if ((w[0]! & 0xffc0) === 0xfe80) return 'link-local';
  const classes = embeddedIPv4(w).map(ipv4Class);
  return CLASS_ORDER.find((c) => classes.includes(c)) ?? null;
}

/** RFC 5952: lower case, no leading zeros, the longest run (2+) of zero groups as `::`. */
function formatIPv6(w: readonly number[]): string {
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (w[i] !== 0) { i++; continue; }
    let j = i;
    while (j < 8 && w[j] === 0) j++;
    if (j - i > bestLen) { best = i; bestLen = j - i; }
    i = j;
  }
  const hex = (list: readonly number[]) => list.map((x) => x.toString(16)).join(':');
  const mappedV4 = w.slice(0, 5).every((x) => x === 0) && w[5] === 0xffff;
  if (mappedV4) return `::ffff:${w[6]! >> 8}.${w[6]! & 0xff}.${w[7]! >> 8}.${w[7]! & 0xff}`;
  if (best < 0) return hex(w);
  return `${hex(w.slice(0, best))}::${hex(w.slice(best + bestLen))}`;
}

/**
 * An address in strict dotted decimal (four parts of 0-255 without leading zeros), the spelling
 * EndpointSlices carry and its own canonical form, as its 32-bit number (ipv4Number); -1 for any
 * other spelling. parseAddress's fast path: it reads such an address as the general path does,
 * without splitting or allocating.
 */
function dottedQuadNumber(s: string): number {
  let n = 0;
  let parts = 0;
  let part = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || parts === 3) return -1;
      n = n * 256 + part;
      parts++;
      part = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return -1;
      part = part * 10 + (c - 48);
      if (part > 255) return -1;
      digits++;
    } else return -1;
  }
  if (digits === 0 || parts !== 3) return -1;
  return n * 256 + part;
}

/**
 * An IP address in any spelling (inet_aton's IPv4 forms, IPv6 with brackets, an embedded IPv4,
 * a zone id), or null. A single trailing dot is read as a resolver would read the name.
 */
export function parseAddress(raw: string): ParsedAddress | null {
  const quad = dottedQuadNumber(raw);
  if (quad >= 0) return { family: 4, canonical: raw, class: ipv4NumberClass(quad) };
  let s = raw.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  if (s.endsWith('.') && !s.includes(':')) s = s.slice(0, -1);
  if (s === '') return null;
  if (!s.includes(':')) {
    const b = parseIPv4(s);
    return b ? { family: 4, canonical: b.join('.'), class: ipv4Class(b) } : null;
  }
  const zoneAt = s.indexOf('%');
  const zone = zoneAt >= 0 ? s.slice(zoneAt) : '';
  if (zone !== '' && !/^%[A-Za-z0-9_.-]{1,64}$/.test(zone)) return null;
  const w = parseIPv6(zoneAt >= 0 ? s.slice(0, zoneAt) : s);
  return w ? { family: 6, canonical: formatIPv6(w) + zone, class: ipv6Class(w) } : null;
}

/** `localhost`, `localhost.` and names under it: resolvers answer them with loopback (RFC 6761). */
export function isLocalhostName(name: string): boolean {
  const n = name.trim().toLowerCase().replace(/\.$/, '');
  return n === 'localhost' || n.endsWith('.localhost');
}

export type AddressVerdict =
  | { ok: true; address: string }
  | { ok: false; reason: string };

function judgeClass(policy: AddressPolicy, cls: AddressClass | null, port: string): string | null {
  if (cls === null) return null;
  if (!policy.allow.has(cls)) return `a ${cls} address (allowed only with --allow-upstream-addresses=${cls})`;
  if ((cls === 'loopback' || cls === 'unspecified') && policy.ownPorts.has(Number(port))) {
    return `port ${port} of this node is one of the controller's own listeners`;
  }
  return null;
}

/** The canonical spelling of an address and of every IPv4 address it carries where it is dialled. */
function addressesReached(parsed: ParsedAddress): string[] {
  if (parsed.family === 4) return [parsed.canonical];
  const zoneAt = parsed.canonical.indexOf('%');
  const bare = zoneAt >= 0 ? parsed.canonical.slice(0, zoneAt) : parsed.canonical;
  const w = parseIPv6(bare);
  return [bare, ...(w ? embeddedIPv4(w).map((b) => b.join('.')) : [])];
}

/** Why `parsed` on `port` reaches the controller through its own pod's address, or null. */
function judgeOwnAddress(policy: AddressPolicy, parsed: ParsedAddress, port: string): string | null {
  const own = policy.ownAddresses;
  if (own === undefined || own.size === 0 || !policy.ownPorts.has(Number(port))) return null;
  const hit = addressesReached(parsed).find((a) => own.has(a));
  return hit === undefined ? null : `port ${port} of ${hit}, an address of the controller's own pod, is one of the controller's own listeners`;
}

/** Whether `host` names one of the controller pod's own addresses (in any spelling). */
export function isOwnAddress(policy: AddressPolicy, host: string): boolean {
  const own = policy.ownAddresses;
  if (own === undefined || own.size === 0) return false;
  const parsed = parseAddress(host);
  return parsed !== null && addressesReached(parsed).some((a) => own.has(a));
}

/**
 * --own-addresses (or POD_IP and the interfaces' addresses) as the policy holds them: each in
 * canonical spelling, without a zone; an entry that is no IP address is the error.
 */
export function ownAddressSet(list: readonly string[]): Set<string> | { error: string } {
  const out = new Set<string>();
  for (const raw of list) {
    const text = raw.trim();
    if (text === '') continue;
    const parsed = parseAddress(text);
    if (!parsed) return { error: `"${text}" is not an IP address` };
    out.add(addressesReached(parsed)[0]!);
  }
  return out;
}

function judgeAddress(policy: AddressPolicy, parsed: ParsedAddress, port: string): AddressVerdict {
  const refused = judgeOwnAddress(policy, parsed, port) ?? judgeClass(policy, parsed.class, port);
  return refused ? { ok: false, reason: refused } : { ok: true, address: parsed.canonical };
}

/** An EndpointSlice (or ClusterIP) address: an IP address the policy allows, in its canonical spelling. */
export function judgeEndpointAddress(policy: AddressPolicy, address: string, port: string): AddressVerdict {
  const parsed = parseAddress(address);
  if (!parsed) return { ok: false, reason: 'not an IP address' };
  return judgeAddress(policy, parsed, port);
}

/**
 * judgeEndpointAddress's answer for the endpoints of every build: the canonical address, or null
 * when refused (judgeEndpointAddress says why). The spelling EndpointSlices carry is judged
 * without allocating a parsed address or a verdict per endpoint.
 */
export function allowedEndpointAddress(policy: AddressPolicy, address: string, port: string): string | null {
  const quad = dottedQuadNumber(address);
  if (quad >= 0 && policy.ownAddresses?.has(address) !== true) return judgeClass(policy, ipv4NumberClass(quad), port) === null ? address : null;
  const verdict = judgeEndpointAddress(policy, address, port);
  return verdict.ok ? verdict.address : null;
}

/**
 * An ExternalName target: an address in any spelling is judged as one (and given to NGINX
 * canonical), a localhost name as loopback; any other name is left to DNS, whose answers Lua
 * judges.
 */
export function judgeExternalName(policy: AddressPolicy, name: string, port: string): AddressVerdict {
  const parsed = parseAddress(name);
  if (parsed) return judgeAddress(policy, parsed, port);
  if (isLocalhostName(name)) {
    const refused = judgeClass(policy, 'loopback', port);
    return refused ? { ok: false, reason: refused } : { ok: true, address: '127.0.0.1' };
  }
  return { ok: true, address: name };
}

/** `--allow-upstream-addresses`: a comma-separated list of classes (`loopback,link-local`), or empty. */
export function parseAllowedClasses(text: string): Set<AddressClass> | { error: string } {
  const out = new Set<AddressClass>();
  for (const raw of text.split(',')) {
    const name = raw.trim();
    if (name === '') continue;
    if (!(ADDRESS_CLASSES as readonly string[]).includes(name)) {
      return { error: `"${name}" is not an address class (${ADDRESS_CLASSES.join(', ')})` };
    }
    out.add(name as AddressClass);
  }
  return out;
}
