// ingress-nginx test/e2e/loadbalance/{round_robin,configmap,ewma}.go, ported on one controller
// with three echo endpoints: first the default algorithm with one worker, then the ConfigMap's
// load-balance "ewma" with two workers (one ConfigMap change). Where the e2e tests read the
// backend's algorithm with `dbg backends`, the port shows EWMA at work: it keeps requests away
// from a slow endpoint, which round robin gives its share.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { untilRunning } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';
import { waitFor } from '../../../support/wait.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'load-balance.com';

const configMap = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx-config', namespace: 'loadbalance' }, data });

test.before(async () => {
  fx = await startFixture('loadbalance', {
    replicas: 3, args: ['--configmap', 'loadbalance/nginx-config'], files: { 'configmap.json': [configMap({ 'worker-processes': '1' })] },
  });
  await fx.applyAndWait('ingress.json', [fx.single('load-balance', HOST)], HOST);
});
test.after(async () => {
  await fx.stop();
});

/** How many of `n` requests (10 at a time) each endpoint answered; every one is a 200. */
async function distribution(p: ProtocolClient, n: number): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (let i = 0; i < n; i += 10) {
    for (const r of await Promise.all(Array.from({ length: Math.min(10, n - i) }, () => p.request(HOST, '/')))) {
      assert.is(r.status, 200);
      counts.set(r.backend!, (counts.get(r.backend!) ?? 0) + 1);
    }
  }
  return counts;
}

its.both('loadbalance/round_robin.go:39', async (p) => {
  assert.equal([...(await distribution(p, 600)).values()], [200, 200, 200]);
});

/** Turns on the ConfigMap's ewma with two workers (the next Its' setting); waits until the backend has it. */
async function ewma(): Promise<void> {
  fx.apply('configmap.json', [configMap({ 'worker-processes': '2', 'load-balance': 'ewma' })]);
  await waitFor(async () => {
    const backends = JSON.parse((await fx.ctl.control('/configuration/backends')).body) as Array<Record<string, unknown>>;
    return backends.some((b) => b.name === 'loadbalance-echo-80' && b['load-balance'] === 'ewma');
  }, { what: 'the backend balanced by ewma' });
  await untilRunning(fx.ctl, 'worker_processes 2;');
}

its.both('loadbalance/configmap.go:37', async (p) => {
  await ewma();
  // One endpoint answers 150 ms late: EWMA (two random choices, the faster wins) leaves it
  // almost alone once its latency is known; round robin would give it a third.
  const slow = fx.echo[0]!;
  slow.setDelay(150);
  try {
    for (let i = 0; i < 6; i++) await p.request(HOST, '/');
    const before = slow.hits();
    for (let i = 0; i < 30; i++) assert.is((await p.request(HOST, '/')).status, 200);
    assert.ok(slow.hits() - before <= 5, `the slow endpoint answered ${slow.hits() - before} of 30`);
  } finally {
    slow.setDelay(0);
  }
});

its.both('loadbalance/ewma.go:43', async (p) => {
  await ewma();
  const counts = await distribution(p, 30);
  assert.is([...counts.values()].reduce((a, b) => a + b, 0), 30);
});

test.run();
