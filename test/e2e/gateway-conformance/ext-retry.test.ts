// Gateway API: HTTPRoute rule `retry` (HTTPRouteRetry, ported from the conformance test of that
// name; HTTPRouteRetryConnectionError and HTTPRouteRetryBackendTimeout, which the v1.6.1 suite
// has no test for: ours follow the features' definitions and the API's doc comments). Local mode
// with real NGINX: a backend that fails its first tries on purpose (a status code, a connection
// reset, or too slow) and counts them. Retries go through the Lua balancer's tries and the
// router location of the rule's codes (docs/gateway-api.md), so two routes of one dynamic host
// retry different codes; `attempts` counts retries, after the first try.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFlakyServer, type FlakyServer } from '../../support/flaky-server.js';
import { prefixRoute, startGatewayLocal, stopGatewayLocal, type PrefixRule } from '../../support/gateway-local.js';
import { service, slices, type LocalController } from '../../support/local-harness.js';
import { protocolMatrix, type ProtocolClient } from '../../support/protocols.js';

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let flaky: FlakyServer;
const reloads = () => ctl.metric('nginx_ingress_controller_success');

/** A route whose rules all go to the flaky backend. */
const route = (name: string, host: string, rules: PrefixRule[]) => prefixRoute(name, host, rules.map((r) => ({ ...r, to: 'flaky' })));

const RETRIES = route('retries', 'retry.test', [
  { path: '/retry/code-500-attempts-3', retry: { codes: [500], attempts: 3 } },
  { path: '/retry/code-all-attempts-2', retry: { codes: [500, 502, 503, 504], attempts: 2 } },
  { path: '/plain' },
]);

let serial = 0;
/** One request with its own counter; the answer and the tries the backend saw. */
async function attempt(p: ProtocolClient, host: string, path: string, query: Record<string, string>, opts: { method?: string } = {}) {
  const uuid = `${p.tag}-${++serial}`;
  const r = await p.request(host, `${path}?${new URLSearchParams({ uuid, ...query })}`, opts);
  return { status: r.status, tries: flaky.tries(uuid), reply: r };
}

test.before(async () => {
  flaky = await startFlakyServer({ address: '127.0.0.41', name: 'flaky' });
  ({ ctl } = await startGatewayLocal([], {
    'flaky.json': [service('team-a', 'flaky'), ...slices('team-a', 'flaky', [flaky])],
    'retries.json': [RETRIES],
    'connection.json': [route('retries-connection-error', 'retry-connection.test', [
      { path: '/retry/no-status-code-attempts-3', retry: { attempts: 3 } },
    ])],
    'timeout.json': [route('retries-backend-timeout', 'retry-timeout.test', [
      { path: '/retry/backend-request-timeout-200ms', retry: { attempts: 2 }, timeouts: { backendRequest: '200ms' } },
    ])],
    'bad.json': [route('bad-retries', 'bad-retry.test', [
      { path: '/code-600', retry: { codes: [600] } },
      { path: '/attempts-0', retry: { attempts: 0 } },
      { path: '/attempts-text', retry: { attempts: '3\nreturn 200' } },
      { path: '/backoff-injected', retry: { backoff: '1s;\nreturn 200' } },
      { path: '/not-an-object', retry: [500] },
      { path: '/code-501', retry: { codes: [501, 500], attempts: 1 } },
      { path: '/backoff', retry: { codes: [500], attempts: 2, backoff: '100ms' } },
      { path: '/many', retry: { codes: [500], attempts: 1000 } },
    ])],
  }));
  await ctl.until('retry.test', '/plain?uuid=ready', (r) => r.backend === 'flaky', { what: 'retry.test served' });
});

test.after(async () => {
  await stopGatewayLocal(ctl, {});
  await flaky?.close();
});

// NGINX does not count a try whose kept-alive connection failed (the backend may have closed it
// while idle): a reset on the first try can cost one try more than asked.
const KEPT_ALIVE_SPARE = 1;

// [path, responseCode, succeedAfter, answer, tries]: the conformance test's cases, and the tries each takes.
const CASES: Array<[string, string, number, number, number]> = [
  ['/retry/code-500-attempts-3', '500', 2, 200, 3],
  ['/retry/code-500-attempts-3', '500', 4, 500, 4],
  ['/retry/code-500-attempts-3', '503', 2, 503, 1],
  ['/retry/code-all-attempts-2', '500', 1, 200, 2],
  ['/retry/code-all-attempts-2', '500', 3, 500, 3],
  ['/retry/code-all-attempts-2', '502', 1, 200, 2],
  ['/retry/code-all-attempts-2', '502', 3, 502, 3],
  ['/retry/code-all-attempts-2', '503', 1, 200, 2],
  ['/retry/code-all-attempts-2', '503', 3, 503, 3],
  ['/retry/code-all-attempts-2', '504', 1, 200, 2],
  ['/retry/code-all-attempts-2', '504', 3, 504, 3],
];

over.both('HTTPRouteRetry › the listed codes are retried up to attempts times; an unlisted code (503 where only 500 is) is answered at once; two rules of one host retry different codes', async (p) => {
  await p.until('retry.test', '/plain?uuid=ready', (r) => r.backend === 'flaky', { what: 'retry.test over this protocol' });
  for (const [path, code, succeedAfter, status, tries] of CASES) {
    const r = await attempt(p, 'retry.test', path, { responseCode: code, succeedAfter: String(succeedAfter) });
    assert.equal([r.status, r.tries], [status, tries], `${path} with ${code} on the first ${succeedAfter} tries`);
    if (status !== 200) assert.match(r.reply.body, /^failing try/, 'the backend\'s own answer of the last try is passed on');
  }
  // attempts counts retries: 3 retries take the 4th try.
  const fourth = await attempt(p, 'retry.test', '/retry/code-500-attempts-3', { responseCode: '500', succeedAfter: '3' });
  assert.equal([fourth.status, fourth.tries, fourth.reply.json?.tries], [200, 4, 4]);
});

over.both('HTTPRouteRetry › a rule without retry on the same host: a 500 and a reset get one try, as before', async (p) => {
  const failing = await attempt(p, 'retry.test', '/plain', { responseCode: '500', succeedAfter: '1' });
  assert.equal([failing.status, failing.tries], [500, 1]);
  const reset = await attempt(p, 'retry.test', '/plain', { succeedAfter: '3' });
  assert.is(reset.status, 502);
  assert.ok(reset.tries <= KEPT_ALIVE_SPARE + 1, `${reset.tries} tries`);
});

over.both('HTTPRouteRetry › a POST is not sent again after a failing answer (NGINX retries a non-idempotent request only if it was not sent)', async (p) => {
  const r = await attempt(p, 'retry.test', '/retry/code-500-attempts-3', { responseCode: '500', succeedAfter: '1' }, { method: 'POST' });
  assert.equal([r.status, r.tries], [500, 1]);
});

over.both('HTTPRouteRetryConnectionError › a reset connection is retried up to attempts times, with or without codes; then 502', async (p) => {
  const ok = await attempt(p, 'retry-connection.test', '/retry/no-status-code-attempts-3', { succeedAfter: '2' });
  assert.equal([ok.status, ok.tries], [200, 3]);
  const exhausted = await attempt(p, 'retry-connection.test', '/retry/no-status-code-attempts-3', { succeedAfter: '6' });
  assert.is(exhausted.status, 502);
  assert.ok(exhausted.tries >= 4 && exhausted.tries <= 4 + KEPT_ALIVE_SPARE, `${exhausted.tries} tries`);
  const withCodes = await attempt(p, 'retry.test', '/retry/code-500-attempts-3', { succeedAfter: '1' });
  assert.equal([withCodes.status, withCodes.tries], [200, 2]);
  // Without retry codes, a failing answer is passed on at once.
  const answer = await attempt(p, 'retry-connection.test', '/retry/no-status-code-attempts-3', { responseCode: '500', succeedAfter: '1' });
  assert.equal([answer.status, answer.tries], [500, 1]);
});

over.both('HTTPRouteRetryBackendTimeout › a try slower than timeouts.backendRequest is retried up to attempts times; then 504', async (p) => {
  const ok = await attempt(p, 'retry-timeout.test', '/retry/backend-request-timeout-200ms', { responseCode: '500', succeedAfter: '2', delayMs: '400' });
  assert.equal([ok.status, ok.tries], [200, 3]);
  const exhausted = await attempt(p, 'retry-timeout.test', '/retry/backend-request-timeout-200ms', { responseCode: '500', succeedAfter: '3', delayMs: '400' });
  assert.equal([exhausted.status, exhausted.tries], [504, 3]);
});

over.both('HTTPRouteRetry › values the CRD refuses set their rule aside, named; unserved codes, a backoff and too many attempts are named', async (p) => {
  for (const [i, field] of ['retry.codes[0]', 'retry.attempts', 'retry.attempts', 'retry.backoff', 'retry'].entries()) {
    await ctl.logged(new RegExp(`HTTPRoute team-a/bad-retries.*spec\\.rules\\[${i}\\]\\.${field.replace(/[.[\]]/g, '\\$&')}.*rule set aside`), `the warning on rule ${i}`);
  }
  for (const path of ['/code-600', '/attempts-0', '/attempts-text', '/backoff-injected', '/not-an-object']) {
    assert.is((await p.request('bad-retry.test', `${path}?uuid=x`)).status, 404, `${path} is not served`);
  }
  await ctl.logged(/HTTPRoute team-a\/bad-retries.*spec\.rules\[5\]\.retry\.codes\[0\].*501 is not retried/, 'the unserved code named');
  const served = await attempt(p, 'bad-retry.test', '/code-501', { responseCode: '500', succeedAfter: '1' });
  assert.equal([served.status, served.tries], [200, 2], 'its other code is retried');
  const notServed = await attempt(p, 'bad-retry.test', '/code-501', { responseCode: '501', succeedAfter: '1' });
  assert.equal([notServed.status, notServed.tries], [501, 1]);
  await ctl.logged(/HTTPRoute team-a\/bad-retries.*spec\.rules\[6\]\.retry\.backoff.*served without retries/, 'the backoff named');
  const backoff = await attempt(p, 'bad-retry.test', '/backoff', { responseCode: '500', succeedAfter: '1' });
  assert.equal([backoff.status, backoff.tries], [500, 1], 'never retried sooner than the backoff: not retried');
  await ctl.logged(/HTTPRoute team-a\/bad-retries.*spec\.rules\[7\]\.retry\.attempts.*10 apply/, 'the cap named');
  const many = await attempt(p, 'bad-retry.test', '/many', { responseCode: '500', succeedAfter: '100' });
  assert.equal([many.status, many.tries], [500, 11]);
});

over.both('HTTPRouteRetry › a changed retry is served without a reload', async (p) => {
  const host = `retry-change-${p.tag}.test`;
  const before = await reloads();
  ctl.write(`change-${p.tag}.json`, [route(`change-${p.tag}`, host, [{ path: '/', retry: { codes: [500], attempts: 1 } }])]);
  await p.until(host, '/?uuid=ready', (r) => r.backend === 'flaky', { what: 'the new route served' });
  assert.equal((await attempt(p, host, '/', { responseCode: '503', succeedAfter: '1' })).status, 503);
  ctl.write(`change-${p.tag}.json`, [route(`change-${p.tag}`, host, [{ path: '/', retry: { codes: [503], attempts: 1 } }])]);
  const after = await p.until(host, `/?uuid=changed-${p.tag}-${++serial}&responseCode=503&succeedAfter=1`, (r) => r.status === 200, { what: 'the changed route served' });
  assert.is(after.json?.tries, 2);
  assert.is(await reloads(), before, 'no reload');
});

test.run();
