// ingress-nginx test/e2e/annotations/upstreamhashby.go, ported: six echo endpoints behind the
// echo Service (a Service per It, each its own backend), 100 requests for one URI, and the
// endpoints that answered them (the e2e test counts the pods' hostnames).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);

const HOSTS: Record<string, Record<string, string>> = {
  'same.upstream-hash-by.foo.com': { 'upstream-hash-by': '$request_uri' },
  'subset.upstream-hash-by.foo.com': { 'upstream-hash-by': '$request_uri', 'upstream-hash-by-subset': 'true', 'upstream-hash-by-subset-size': '3' },
};

test.before(async () => {
  fx = await startFixture('upstreamhashby', { replicas: 6 });
  fx.apply('ingresses.json', Object.entries(HOSTS).flatMap(([host, a]) => {
    const name = host.split('.')[0]!;
    return [...fx.echoService(name), fx.single(name, host, a, { svc: name })];
  }));
  await Promise.all(Object.keys(HOSTS).map((h) => fx.ctl.until(h, '/', (r) => r.backend !== undefined, { what: `${h} served` })));
});
test.after(async () => {
  await fx.stop();
});

/** The endpoints that answered 100 requests for `/` (10 at a time). */
async function answeredBy(p: ProtocolClient, host: string): Promise<Set<string>> {
  const names = new Set<string>();
  for (let i = 0; i < 100; i += 10) {
    for (const r of await Promise.all(Array.from({ length: 10 }, () => p.request(host, '/')))) {
      assert.is(r.status, 200);
      names.add(r.backend!);
    }
  }
  return names;
}

its.both('annotations/upstreamhashby.go:86', async (p) => {
  assert.is((await answeredBy(p, 'same.upstream-hash-by.foo.com')).size, 1);
});

its.both('annotations/upstreamhashby.go:95', async (p) => {
  assert.is((await answeredBy(p, 'subset.upstream-hash-by.foo.com')).size, 3);
});

test.run();
