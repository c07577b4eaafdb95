// ExternalName backends: the Lua side resolves the external name (A records, its own small
// resolver) in a timer, follows TTL-expired changes, and keeps serving while DNS fails. The
// address policy judges what DNS answers, and reads every spelling as the model does. Answers are
// asked for over HTTP/1.1 and HTTP/2 (the harness's TLS listener speaks h2).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startLuaNginx, backend, answersFromEveryWorker, type LuaNginx } from '../support/lua-nginx.js';
import { startEchoServer, startEchoServers, closeAll, type EchoServer } from '../support/echo-server.js';
import { waitFor } from '../support/wait.js';
import { startFakeDns } from '../support/fake-dns.js';
import { NODE_LOCAL_SPELLINGS } from '../support/hostile.js';
import { STRICT_ADDRESS_POLICY, judgeEndpointAddress, parseAddress } from '../../src/model/checks/address-policy.js';

const test = suite('lua ExternalName');

let nginx: LuaNginx;
let echo: EchoServer[];
let dns: Awaited<ReturnType<typeof startFakeDns>>;
const records = new Map<string, string[]>();
const delays = new Map<string, number>();

test.before(async () => {
  echo = await startEchoServers(2, { firstOctet: 60 });
  dns = await startFakeDns(records, delays);
  nginx = await startLuaNginx({
    workers: 2, locations: [{ path: '/', backend: 'ext' }], extraInitLua: `configuration.resolvers = { "127.0.0.1:${dns.port}" }`,
    // A probe: address_policy.parse() and refusal() of each posted address (port 80) under this policy.
    extraLocations: `
    location = /address-policy {
      content_by_lua_block {
        ngx.req.read_body()
        local out = {}
        for i, a in ipairs(require("cjson").decode(ngx.req.get_body_data())) do
          local p = address_policy.parse(a)
          out[i] = p and { family = p.family, address = p.address, class = p.class or "", refusal = address_policy.refusal(p, 80) or "" } or false
        end
        ngx.say(require("cjson").encode(out))
      }
    }`,
  });
});
test.after(async () => {
  await nginx?.stop();
  dns?.close();
  await closeAll(echo ?? []);
});

/** Both protocols' request options (the HTTP/2 one over TLS). */
const BOTH: ReadonlyArray<{ http2?: boolean }> = [{}, { http2: true }];
/** Eight requests at once, half of them over HTTP/2, then a round over each protocol in which every worker answered. */
const burstFromEveryWorker = async () => [
  ...await Promise.all(Array.from({ length: 8 }, (_, i) => nginx.request(BOTH[i % 2]!))),
  ...(await Promise.all(BOTH.map((o) => answersFromEveryWorker(nginx, o)))).flat(),
];

const externalName = (name: string, port: number) => backend('ext', [{ address: name, port: String(port) }], {
  service: { metadata: { namespace: 'default', name: 'ext' }, spec: { type: 'ExternalName', externalName: name } },
});

test('an ExternalName backend is served at the address its name resolves to', async () => {
  records.set('app.external.test', [echo[0].address]);
  await nginx.configure('/configuration/backends', [externalName('app.external.test', echo[0].port)]);
  for (const o of BOTH) {
    await waitFor(async () => {
      const r = await nginx.request(o);
      return r.status === 200 && (JSON.parse(r.body) as { name: string }).name === echo[0].name;
    }, { what: `the resolved endpoint${o.http2 ? ' over HTTP/2' : ''}` });
  }
  assert.ok(dns.queries.includes('app.external.test'));
});

test('a newly posted ExternalName backend is served by every worker from the first request after the POST', async () => {
  // A name no worker asked before: a worker whose timer has not resolved it yet resolves it for
  // the request instead of answering 503.
  records.set('fresh.external.test', [echo[1].address]);
  await nginx.configure('/configuration/backends', [externalName('fresh.external.test', echo[1].port)]);
  // Sent at once (the timer ticks every 0.1 s), then until every worker answered.
  const answers = await burstFromEveryWorker();
  assert.equal(answers.map((r) => r.status), answers.map(() => 200));
  assert.ok(answers.every((r) => (JSON.parse(r.body) as { name: string }).name === echo[1].name));
  await nginx.configure('/configuration/backends', [externalName('app.external.test', echo[0].port)]);
  await waitFor(async () => (JSON.parse((await nginx.request()).body) as { name: string }).name === echo[0].name, { what: 'app.external.test again' });
});

test("a changed ExternalName is not served from the names posted before while a worker's timer waits on DNS", async () => {
  // Each worker's 0.1 s timer takes the post up and resolves the new name, yielding while DNS is
  // slow; a request arriving meanwhile used to find the new names noted and keep the old balancer.
  records.set('slow.external.test', [echo[1].address]);
  delays.set('slow.external.test', 400);
  try {
    const asked = () => dns.queries.filter((q) => q === 'slow.external.test').length;
    await nginx.configure('/configuration/backends', [externalName('slow.external.test', echo[1].port)]);
    await waitFor(() => asked() >= 2, { what: 'both workers asking DNS for the new name' });
    const answers = await burstFromEveryWorker();
    const seen = (r: { status: number; body: string }) => (r.status === 200 ? `200 ${(JSON.parse(r.body) as { name: string }).name}` : `${r.status}`);
    assert.equal(answers.map(seen), answers.map(() => `200 ${echo[1].name}`));
  } finally {
    delays.delete('slow.external.test');
  }
  await nginx.configure('/configuration/backends', [externalName('app.external.test', echo[0].port)]);
  await waitFor(async () => (JSON.parse((await nginx.request()).body) as { name: string }).name === echo[0].name, { what: 'app.external.test again' });
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

test('the Lua guard reads every spelling of an address as the model does', async () => {
  const corpus = [
    ...NODE_LOCAL_SPELLINGS.map(([s]) => s),
    '10.0.0.1', '010.0.0.1', '1.2.3.4.', '2001:db8::1', '[2001:DB8:0:0:0:0:0:1]', '64:ff9b::127.0.0.1', '::2:3:4:5:6:7:8',
    '256.0.0.1', '1.2.3.4.5', '08.0.0.1', '0x', '1..2', '4294967296', '1::2::3', ':::1', '12345::', '1:2:3:4:5:6:7::8',
    '::ffff:127.0.0.01', '::1%', 'example.com', '',
  ];
  const r = await nginx.request({ path: '/address-policy', method: 'POST', body: JSON.stringify(corpus) });
  assert.is(r.status, 200, r.body);
  const lua = JSON.parse(r.body) as Array<false | { family: number; address: string; class: string; refusal: string }>;
  corpus.forEach((spelling, i) => {
    const model = parseAddress(spelling);
    const got = lua[i]!;
    if (!model) {
      assert.is(got, false, `${JSON.stringify(spelling)} is no address for Lua either`);
      return;
    }
    assert.ok(got, `${spelling} is an address for Lua too`);
    if (!got) return;
    assert.is(got.family, model.family, spelling);
    assert.is(got.class, model.class ?? '', `${spelling}: class`);
    if (model.family === 4) assert.is(got.address, model.canonical, `${spelling}: NGINX dials what was judged`);
    // Loopback is allowed in this harness (the echo backends), the rest is refused as in the model.
    const modelVerdict = judgeEndpointAddress({ ...STRICT_ADDRESS_POLICY, allow: new Set(['loopback']) }, spelling, '80');
    assert.is(got.refusal === '', modelVerdict.ok, `${spelling}: same verdict`);
  });
});

test('DNS answers that point at link-local services or NGINX itself are refused; the others are served', async () => {
  records.set('metadata.external.test', ['169.254.169.254']);
  records.set('self.external.test', ['127.0.0.1']);
  records.set('mixed.external.test', ['169.254.169.254', echo[0].address]);
  await nginx.configure('/configuration/backends', [externalName('metadata.external.test', echo[0].port)]);
  await waitFor(async () => (await nginx.request()).status === 503, { what: 'no endpoint for a metadata answer' });
  await nginx.configure('/configuration/backends', [externalName('self.external.test', nginx.httpPort)]);
  await waitFor(async () => /refusing endpoint 127\.0\.0\.1:\d+ \(resolved from self\.external\.test\): one of the controller's own ports/.test(await nginx.errorLog()), { what: 'the own-port refusal' });
  assert.is((await nginx.request()).status, 503);
  await nginx.configure('/configuration/backends', [externalName('mixed.external.test', echo[0].port)]);
  // Each worker resolves an ExternalName on its own timer (DNS needs a cosocket): await a round
  // of answers in which every worker answered, all 200, rather than some answers in a row.
  await waitFor(async () => (await answersFromEveryWorker(nginx, {})).every((r) => r.status === 200), { what: 'the ordinary answer from every worker' });
  for (let i = 0; i < 6; i++) {
    const res = await nginx.request();
    assert.is(res.status, 200, 'the refused answer is never tried');
    assert.is((JSON.parse(res.body) as { name: string }).name, echo[0].name);
  }
  assert.match(await nginx.errorLog(), /refusing endpoint 169\.254\.169\.254:\d+ \(resolved from metadata\.external\.test\): a metadata address/);
});

test.run();
