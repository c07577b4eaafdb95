// The address policy inside NGINX gives every address of one table the verdict the model gives:
// node-local spellings, cloud metadata services by provider, and IPv4 addresses embedded in NAT64,
// 6to4, Teredo and IPv4-compatible forms. Then NGINX is handed endpoints at those addresses and
// refuses them without connecting. Nothing here dials a non-loopback address: each address is
// posted only once the probe says Lua refuses it, so a policy that accepted one fails the test
// before any request could reach it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { backend, startLuaNginx, type LuaNginx } from '../support/lua-nginx.js';
import { METADATA_AND_EMBEDDED, NODE_LOCAL_SPELLINGS } from '../support/hostile.js';
import { judgeEndpointAddress, ownAddressSet, parseAddress, type AddressPolicy } from '../../src/model/checks/address-policy.js';

let nginx: LuaNginx;
// As local mode: loopback allowed (the harness's echo backends), NGINX's own ports refused, also
// on the controller pod's own addresses (none of them is dialled here).
const OWN_ADDRESSES = ['10.1.2.3', '2001:db8::7'];
const policy = (n: LuaNginx): AddressPolicy => ({
  allow: new Set(['loopback']), ownPorts: new Set([n.httpPort, n.httpsPort]), ownAddresses: ownAddressSet(OWN_ADDRESSES) as Set<string>,
});

test.before(async () => {
  nginx = await startLuaNginx({
    locations: [{ path: '/', backend: 'tenant-web-80' }],
    ownAddresses: OWN_ADDRESSES,
    extraLocations: `
    location = /address-policy {
      content_by_lua_block {
        ngx.req.read_body()
        local out = {}
        for i, a in ipairs(require("cjson").decode(ngx.req.get_body_data())) do
          local p = address_policy.parse(a)
          out[i] = p and { class = p.class or "", refusal = address_policy.refusal(p, tonumber(ngx.var.arg_port) or 80, "tenant-web-80") or "" } or false
        end
        ngx.say(require("cjson").encode(out))
      }
    }`,
  });
});
test.after(async () => { await nginx?.stop(); });

type LuaVerdict = false | { class: string; refusal: string };

async function luaVerdicts(addresses: string[], port = 80): Promise<LuaVerdict[]> {
  const r = await nginx.request({ path: `/address-policy?port=${port}`, method: 'POST', body: JSON.stringify(addresses) });
  assert.is(r.status, 200, r.body);
  return JSON.parse(r.body) as LuaVerdict[];
}

const TABLE = [...NODE_LOCAL_SPELLINGS, ...METADATA_AND_EMBEDDED];

test('the model and Lua give each address of the table the same class and the same verdict', async () => {
  const verdicts = await luaVerdicts(TABLE.map(([a]) => a));
  TABLE.forEach(([address, , cls], i) => {
    const got = verdicts[i]!;
    assert.ok(got, `${address} is an address for Lua`);
    if (!got) return;
    assert.is(parseAddress(address)?.class ?? null, cls, `${address}: the model's class`);
    assert.is(got.class, cls ?? '', `${address}: Lua's class`);
    assert.is(got.refusal === '', judgeEndpointAddress(policy(nginx), address, '80').ok, `${address}: the same verdict`);
  });
});

test('the model and Lua refuse the controller\'s own ports on its pod\'s own addresses, in every spelling, and nothing else there', async () => {
  const spellings = ['10.1.2.3', '012.1.2.3', '167838211', '::ffff:10.1.2.3', '64:ff9b::a01:203', '2002:a01:203::', '2001:db8::7', '[2001:DB8:0::7]', '10.1.2.4', '2001:db8::8'];
  for (const port of [nginx.httpPort, nginx.httpsPort, 9000]) {
    const verdicts = await luaVerdicts(spellings, port);
    spellings.forEach((address, i) => {
      const got = verdicts[i];
      assert.ok(got, `${address} is an address for Lua`);
      if (!got) return;
      const model = judgeEndpointAddress(policy(nginx), address, String(port));
      const own = port !== 9000 && !/^10\.1\.2\.4$|::8$/.test(address);
      assert.is(model.ok, !own, `${address}:${port}: the model's verdict`);
      assert.is(got.refusal === '', model.ok, `${address}:${port}: Lua's verdict (${got.refusal})`);
    });
  }
});

test('NGINX refuses endpoints at metadata and embedded addresses without connecting', async () => {
  const refusedClasses = new Set(['metadata', 'link-local', 'unspecified']);
  const hostile = METADATA_AND_EMBEDDED.filter(([, , cls]) => cls !== null && refusedClasses.has(cls)).map(([a]) => a);
  // Guard: post only what Lua refuses, so nothing below can dial one of them.
  const verdicts = await luaVerdicts(hostile);
  hostile.forEach((a, i) => {
    const v = verdicts[i];
    assert.ok(v && v.refusal !== '', `${a} is refused by Lua (${JSON.stringify(v)})`);
  });
  for (const address of hostile) {
    await nginx.configure('/configuration/backends', [backend('tenant-web-80', [{ address, port: '80' }])]);
    const started = Date.now();
    const r = await nginx.request();
    assert.is(r.status, 503, `${address}: ${r.status}`);
    assert.ok(Date.now() - started < 2000, `${address}: answered at once, no connect attempt timing out`);
  }
  const log = await nginx.errorLog();
  for (const address of hostile) {
    assert.ok(log.includes(`refusing endpoint ${address}:80`), `the error log names ${address}`);
  }
  assert.not.match(log, /connect\(\) (to|failed)|upstream timed out/, 'no connection was attempted');
});

test.run();
