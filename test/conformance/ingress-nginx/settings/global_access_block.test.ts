// ingress-nginx test/e2e/settings/global_access_block.go, ported: block-cidrs, block-user-agents
// and block-referers answer 403 before any Ingress's rules. The three keys are set at once (each
// blocks only what it names): a client address in a blocked range, a blocked User-Agent or
// Referer is refused, the same request without it is served. Loopback stands in for the
// cluster's private ranges: the e2e client is in one of them, ours connects from 127.0.5.1.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'global-access-block.test';
const BLOCKED_CLIENT = '127.0.5.1';

test.before(async () => {
  fx = await startFixture('global-access-block', {
    configmap: {
      'block-cidrs': `172.16.0.0/12,192.168.0.0/16,10.0.0.0/8,${BLOCKED_CLIENT.replace(/\d+$/, '0')}/24`,
      'block-user-agents': String.raw`~*chrome\/68\.0\.3440\.106\ safari\/537\.36,AlphaBot`,
      'block-referers': String.raw`~*example\.com,qwerty`,
    },
  });
  await fx.applyAndWait('ingress.json', [fx.single('global-access-block', HOST)], HOST);
});
test.after(() => fx.stop());

const status = async (p: ProtocolClient, headers: Record<string, string> = {}, localAddress?: string) =>
  (await p.request(HOST, '/', { headers, ...(localAddress ? { localAddress } : {}) })).status;

its.both('settings/global_access_block.go:38', async (p) => {
  assert.is(await status(p, {}, BLOCKED_CLIENT), 403, 'a client in a blocked range');
  assert.is(await status(p, {}, '127.0.0.1'), 200, 'a client outside the blocked ranges');
});

its.both('settings/global_access_block.go:55', async (p) => {
  assert.is(await status(p, { 'User-Agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/68.0.3440.106 Safari/537.36' }), 403);
  assert.is(await status(p, { 'User-Agent': 'AlphaBot' }), 403);
  assert.is(await status(p, { 'User-Agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 11_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/11.0 Mobile/15E148 Safari/604.1' }), 200);
});

its.both('settings/global_access_block.go:88', async (p) => {
  assert.is(await status(p, { Referer: 'example.com' }), 403);
  assert.is(await status(p, { Referer: 'qwerty' }), 403);
  assert.is(await status(p, { Referer: 'qwerty123' }), 200, 'a referer matched exactly, not as a prefix');
});

test.run();
