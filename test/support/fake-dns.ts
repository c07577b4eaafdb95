// A fake DNS server on a free loopback UDP port for tests of names Lua resolves (lua/dns.lua):
// A records from a map, NXDOMAIN for any other name.
import { createSocket, type Socket } from 'node:dgram';

export interface FakeDns { port: number; queries: string[]; close(): void }

/** A fake DNS server: name → IPv4 addresses (answer TTL 1 s); unknown names get NXDOMAIN; a name in `delays` is answered that many ms late. */
export async function startFakeDns(records: Map<string, string[]>, delays: ReadonlyMap<string, number> = new Map()): Promise<FakeDns> {
  const socket: Socket = createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (msg, rinfo) => {
    let pos = 12;
    const labels: string[] = [];
    while (msg[pos] !== 0) { labels.push(msg.subarray(pos + 1, pos + 1 + msg[pos]).toString()); pos += msg[pos] + 1; }
    const question = msg.subarray(12, pos + 5);
    const name = labels.join('.');
    queries.push(name);
    const addresses = records.get(name);
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2);
    header.writeUInt16BE(addresses ? 0x8180 : 0x8183, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses?.length ?? 0, 6);
    const answers = (addresses ?? []).map((ip) => {
      const a = Buffer.alloc(16);
      a.writeUInt16BE(0xc00c, 0); a.writeUInt16BE(1, 2); a.writeUInt16BE(1, 4); a.writeUInt32BE(1, 6); a.writeUInt16BE(4, 10);
      ip.split('.').forEach((o, i) => a.writeUInt8(Number(o), 12 + i));
      return a;
    });
    const reply = Buffer.concat([header, question, ...answers]);
    const delay = delays.get(name);
    if (delay) setTimeout(() => socket.send(reply, rinfo.port, rinfo.address), delay);
    else socket.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()));
  return { port: socket.address().port, queries, close: () => socket.close() };
}
