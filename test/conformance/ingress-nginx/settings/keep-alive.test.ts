// ingress-nginx test/e2e/settings/keep-alive.go, ported. keep-alive-requests is a behaviour a
// client sees: the connection ends after that many requests (HTTP/1.1 `Connection: close`,
// HTTP/2 GOAWAY). The other keys are timeouts of minutes and the upstream pool's size, which no
// request can observe in a test's time, so for them the port reads the configuration NGINX runs.
// Every key is set at once: they are independent directives.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:http2';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { untilRunning } from '../../../support/local-harness.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'keep-alive.test';
const REQUESTS = 200;
let conf = '';

test.before(async () => {
  fx = await startFixture('keep-alive', {
    configmap: {
      'keep-alive': '140', 'keep-alive-requests': String(REQUESTS),
      'upstream-keepalive-connections': '128', 'upstream-keepalive-timeout': '120',
      'upstream-keepalive-time': '75s', 'upstream-keepalive-requests': '200',
    },
  });
  await fx.applyAndWait('ingress.json', [fx.single('keep-alive', HOST)], HOST);
  await untilRunning(fx.ctl, `keepalive_requests ${REQUESTS};`);
  conf = (await fx.ctl.control('/nginx.conf')).body;
});
test.after(() => fx.stop());

/** The `upstream upstream_balancer { … }` block of the running configuration. */
const upstreamBlock = () => /upstream upstream_balancer \{[^}]*\{[^}]*\}[^}]*\}/.exec(conf)?.[0] ?? '';

/** HTTP/1.1: `n` requests one after the other on one kept-alive connection; each answer's Connection header and whether it reused the socket. */
async function http1Series(port: number, n: number): Promise<Array<{ status: number; connection: string; reused: boolean }>> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const out: Array<{ status: number; connection: string; reused: boolean }> = [];
  try {
    for (let i = 0; i < n; i++) {
      out.push(await new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: `/${i}`, agent, headers: { Host: HOST } }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: String(res.headers.connection ?? ''), reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end();
      }));
    }
  } finally {
    agent.destroy();
  }
  return out;
}

/** HTTP/2: `n` requests one after the other on one connection; how many had completed when NGINX sent GOAWAY (-1: never). */
function http2Series(port: number, n: number): Promise<{ statuses: number[]; goawayAfter: number }> {
  return new Promise((resolve, reject) => {
    const session = connect(`https://127.0.0.1:${port}`, { servername: HOST, rejectUnauthorized: false, ALPNProtocols: ['h2'] });
    const statuses: number[] = [];
    let goawayAfter = -1;
    session.on('goaway', () => { if (goawayAfter < 0) goawayAfter = statuses.length; });
    session.on('error', reject);
    const next = (): void => {
      if (statuses.length === n) {
        session.close();
        resolve({ statuses, goawayAfter });
        return;
      }
      const req = session.request({ ':path': `/${statuses.length}`, ':authority': HOST });
      req.on('response', (h) => statuses.push(Number(h[':status'])));
      req.on('error', reject);
      req.resume();
      req.on('end', next);
      req.end();
    };
    session.on('connect', next);
  });
}

its.noClient('settings/keep-alive.go:40', 'a 140 s idle timeout, longer than a test should wait', async () => {
  assert.ok(conf.includes('keepalive_timeout 140s;'));
});

its.both('settings/keep-alive.go:48', async (p: ProtocolClient) => {
  assert.is((await p.request(HOST, '/')).status, 200);
  if (p.protocol === 'HTTP/1.1') {
    const series = await http1Series(p.port, REQUESTS + 1);
    // One connection carries keep-alive-requests requests; the last of them closes it.
    const bad = series.slice(1, REQUESTS - 1).findIndex((r) => !(r.reused && r.connection === 'keep-alive'));
    assert.is(bad, -1, `requests 2…199 reuse the connection: ${JSON.stringify(series[bad + 1])} at ${bad + 2}`);
    assert.is(series[REQUESTS - 1]!.connection, 'close', `answer ${REQUESTS} closes the connection`);
    assert.is(series[REQUESTS]!.reused, false, `request ${REQUESTS + 1} needs a new connection`);
    assert.ok(series.every((r) => r.status === 200));
  } else {
    const { statuses, goawayAfter } = await http2Series(p.port, REQUESTS);
    assert.ok(statuses.every((s) => s === 200), 'every request of the connection is answered');
    // NGINX sends GOAWAY as it takes the connection's last request.
    assert.ok(goawayAfter >= REQUESTS - 1, `GOAWAY after ${goawayAfter} requests`);
  }
});

const UPSTREAM_WHY = 'the upstream connection pool of every worker, which no request can observe';
its.noClient('settings/keep-alive.go:58', UPSTREAM_WHY, async () => assert.match(upstreamBlock(), /\n\s*keepalive 128;/));
its.noClient('settings/keep-alive.go:68', UPSTREAM_WHY, async () => assert.match(upstreamBlock(), /\n\s*keepalive_timeout 120s;/));
its.noClient('settings/keep-alive.go:78', UPSTREAM_WHY, async () => assert.match(upstreamBlock(), /\n\s*keepalive_time 75s;/));
its.noClient('settings/keep-alive.go:88', UPSTREAM_WHY, async () => assert.match(upstreamBlock(), /\n\s*keepalive_requests 200;/));

test.run();
