// ingress-nginx test/e2e/annotations/limitrate.go, ported: limit-rate (KB per second) slows the
// answer's body, and a change of the annotation is applied. The e2e test greps nginx.conf for
// `limit_rate 1k` then `90k`; the port times an answer: 2 KB take about a second at 1k (NGINX
// sends at most 1 KB a second, after the first), and no time at 90k. Each protocol's leg has a
// host of its own, as the It changes its Ingress.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { serverBlock } from '../../../../src/cli/dbg.js';
import { waitFor } from '../../../support/wait.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const host = (tag: string) => `${tag}.limit-rate-annotation`;
const ing = (tag: string, rate: number) => fx.single(`limit-rate-${tag}`, host(tag), { 'proxy-buffering': 'on', 'limit-rate': String(rate) });

test.before(async () => {
  fx = await startFixture('limit-rate-annotation');
  for (const tag of ['h1', 'h2']) await fx.applyAndWait(`${tag}.json`, [ing(tag, 1)], host(tag));
});
test.after(() => fx.stop());

/** Waits until NGINX's workers run a configuration whose server block for `name` has `marker`. */
async function untilServerRuns(name: string, marker: string): Promise<void> {
  await waitFor(async () => {
    const conf = (await fx.ctl.control('/nginx.conf')).body;
    const checksum = /^# Configuration checksum: (\w+)/.exec(conf)?.[1];
    return (serverBlock(conf, name) ?? '').includes(marker) && (await fx.ctl.control('/configuration-checksum')).body === checksum;
  }, { timeoutMs: 15_000, what: `NGINX running ${marker} for ${name}` });
}

/** Milliseconds until the whole answer of `bytes` arrived. */
async function timed(p: ProtocolClient, bytes: number): Promise<number> {
  const start = performance.now();
  const r = await p.request(host(p.tag), `/__bytes/${bytes}`);
  assert.is(r.status, 200);
  assert.is(r.bytes.length, bytes);
  return performance.now() - start;
}

its.both('annotations/limitrate.go:37', async (p) => {
  const slow = await timed(p, 2048);
  assert.ok(slow >= 700, `2 KB at 1k took ${Math.round(slow)} ms`);
  fx.apply(`${p.tag}.json`, [ing(p.tag, 90)]);
  await untilServerRuns(host(p.tag), 'limit_rate 90k;');
  const fast = await timed(p, 2048);
  assert.ok(fast < 1000, `2 KB at 90k took ${Math.round(fast)} ms`);
});

test.run();
