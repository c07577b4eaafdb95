// ExternalName backends: the Lua side resolves the external name (A records, its own small
// resolver) in a timer, follows TTL-expired changes, and keeps serving while DNS fails.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createSocket, type Socket } from 'node:dgram';
import { startLuaNginx, backend, type LuaNginx } from '../support/lua-nginx.js';
import { startEchoServer, startEchoServers, closeAll, type EchoServer } from '../support/echo-server.js';
import { waitFor } from '../support/wait.js';

const test = suite('lua ExternalName');

/** A fake DNS server: name → IPv4 addresses (answer TTL 1 s); unknown names get NXDOMAIN. */
async function startFakeDns(records: Map<string, string[]>): Promise<{ port: number; queries: string[]; close(): void }> {
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
    socket.send(Buffer.concat([header, question, ...answers]), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', () => r()));
  return { port: socket.address().port, queries, close: () => socket.close() };
}

let nginx: LuaNginx;
let echo: EchoServer[];
let dns: Awaited<ReturnType<typeof startFakeDns>>;
const records = new Map<string, string[]>();

test.before(async () => {
  echo = await startEchoServers(2, { firstOctet: 60 });
  dns = await startFakeDns(records);
  nginx = await startLuaNginx({ workers: 2, locations: [{ path: '/', backend: 'ext' }], extraInitLua: `configuration.resolvers = { "127.0.0.1:${dns.port}" }` });
});
test.after(async () => {
  await nginx?.stop();
  dns?.close();
  await closeAll(echo ?? []);
});

const externalName = (name: string, port: number) => backend('ext', [{ address: name, port: String(port) }], {
  service: { metadata: { namespace: 'default', name: 'ext' }, spec: { type: 'ExternalName', externalName: name } },
});

test('an ExternalName backend is served at the address its name resolves to', async () => {
  records.set('app.external.test', [echo[0].address]);
  await nginx.configure('/configuration/backends', [externalName('app.external.test', echo[0].port)]);
  await waitFor(async () => {
    const r = await nginx.request();
    return r.status === 200 && (JSON.parse(r.body) as { name: string }).name === echo[0].name;
  }, { what: 'the resolved endpoint' });
  assert.ok(dns.queries.includes('app.external.test'));
});

test('a changed DNS answer is followed once its TTL expires, with no POST and no reload', async () => {
  const pids = await nginx.workerPids();
  // The same port on another loopback address: only DNS tells the two apart.
  const moved = await startEchoServer({ address: '127.0.0.63', port: echo[0].port });
  try {
    records.set('app.external.test', [moved.address]);
    const changed = Date.now();
    await waitFor(async () => {
      const r = await nginx.request();
      return r.status === 200 && (JSON.parse(r.body) as { name: string }).name === moved.name;
    }, { timeoutMs: 5000, what: 'the new address' });
    assert.ok(Date.now() - changed < 2500, 'within the 1 s TTL and a sync tick');
    assert.equal(await nginx.workerPids(), pids);
  } finally {
    await moved.close();
  }
});

test('a name that does not resolve gives 503; an IP written as the external name needs no DNS', async () => {
  await nginx.configure('/configuration/backends', [externalName('missing.external.test', 80)]);
  await waitFor(async () => (await nginx.request()).status === 503, { what: '503' });
  await nginx.configure('/configuration/backends', [externalName(echo[1].address, echo[1].port)]);
  await waitFor(async () => (await nginx.request()).status === 200, { what: 'the literal address' });
  assert.match(await nginx.errorLog(), /cannot resolve missing\.external\.test/);
});

test.run();
