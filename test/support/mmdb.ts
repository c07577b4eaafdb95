// A MaxMind DB (format 2.0) writer for test databases: IPv4 networks, each with a country's ISO
// code, as GeoLite2-City/Country hold it (`country iso_code`). Generated in the test, so the
// GeoIP2 tests download nothing and NGINX's geoip2 module (libmaxminddb) reads a real file.
// Search tree with 24-bit records; data and metadata in the format's type encoding.

/** A uint32 (type 6): libmaxminddb checks node_count's type; other numbers are uint16, bigints uint64. */
class Uint32 { constructor(readonly n: number) {} }
type Value = string | number | bigint | Uint32 | Value[] | { [k: string]: Value };

function control(type: number, size: number): Buffer {
  if (size >= 29) throw new Error('mmdb: values of 29 bytes or more are not needed here');
  return type <= 7 ? Buffer.from([(type << 5) | size]) : Buffer.from([size, type - 7]);
}

function encode(v: Value): Buffer {
  if (typeof v === 'string') { const b = Buffer.from(v, 'utf8'); return Buffer.concat([control(2, b.length), b]); }
  if (typeof v === 'number' || typeof v === 'bigint' || v instanceof Uint32) {
    const type = typeof v === 'bigint' ? 9 : v instanceof Uint32 ? 6 : 5;
    const bytes: number[] = [];
    for (let n = BigInt(v instanceof Uint32 ? v.n : v); n > 0n; n >>= 8n) bytes.unshift(Number(n & 0xffn));
    return Buffer.concat([control(type, bytes.length), Buffer.from(bytes)]);
  }
  if (Array.isArray(v)) return Buffer.concat([control(11, v.length), ...v.map(encode)]);
  const entries = Object.entries(v);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, x]) => [encode(k), encode(x)])]);
}

/** The database's bytes: `networks` maps an IPv4 CIDR (`1.1.1.0/24`) to an ISO country code. */
export function countryDatabase(databaseType: string, networks: Record<string, string>): Buffer {
  const records: Array<[number, number]> = [[-1, -1]];
  const data: Buffer[] = [];
  const leaves: Array<{ node: number; side: 0 | 1; offset: number }> = [];
  let dataLength = 0;
  for (const [cidr, iso] of Object.entries(networks)) {
    const [addr, len] = cidr.split('/') as [string, string];
    const ip = addr.split('.').reduce((acc, o) => (acc << 8) + Number(o), 0) >>> 0;
    const bits = Number(len);
    let node = 0;
    for (let i = 0; i < bits - 1; i++) {
      const side = ((ip >>> (31 - i)) & 1) as 0 | 1;
      if (records[node]![side] === -1) { records.push([-1, -1]); records[node]![side] = records.length - 1; }
      node = records[node]![side];
    }
    const bytes = encode({ country: { iso_code: iso } });
    leaves.push({ node, side: ((ip >>> (32 - bits)) & 1) as 0 | 1, offset: dataLength });
    data.push(bytes);
    dataLength += bytes.length;
  }
  const nodeCount = records.length;
  const value = records.map(([l, r]) => [l === -1 ? nodeCount : l, r === -1 ? nodeCount : r] as [number, number]);
  for (const { node, side, offset } of leaves) value[node]![side] = nodeCount + 16 + offset;
  const tree = Buffer.alloc(nodeCount * 6);
  value.forEach(([l, r], i) => { tree.writeUIntBE(l, i * 6, 3); tree.writeUIntBE(r, i * 6 + 3, 3); });
  const metadata = encode({
    node_count: new Uint32(nodeCount), record_size: 24, ip_version: 4, database_type: databaseType, languages: ['en'],
    binary_format_major_version: 2, binary_format_minor_version: 0, build_epoch: BigInt(Math.floor(Date.now() / 1000)),
    description: { en: 'ingress-rx test database' },
  });
  return Buffer.concat([tree, Buffer.alloc(16), ...data, Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1'), metadata]);
}
