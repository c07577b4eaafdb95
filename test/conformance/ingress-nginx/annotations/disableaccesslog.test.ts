// ingress-nginx test/e2e/annotations/disableaccesslog.go, ported: three ConfigMap keys, one state
// per It, each with a host of its own and the echo Service also exposed as a TCP service. The
// e2e tests grep nginx.conf for `access_log off`; the port reads the access log: a request of the
// host (HTTP) and a connection through the TCP service (stream) are each logged, or not.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { configMap, startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { freePort } from '../../../support/ports.js';
import { waitFor } from '../../../support/wait.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
let tcpPort = 0;
const its = ported(test, () => fx.ctl);
const NS = 'disableaccesslog';
const HOSTS = ['disableaccesslog.foo.com', 'disablehttpaccesslog.foo.com', 'disablestreamaccesslog.foo.com'];

test.before(async () => {
  tcpPort = await freePort();
  fx = await startFixture(NS, {
    configmap: {},
    args: ['--tcp-services-configmap', `${NS}/tcp-services`],
    files: { 'tcp-services.json': [configMap(NS, 'tcp-services', { [String(tcpPort)]: `${NS}/echo:80` })] },
  });
  fx.apply('ingresses.json', HOSTS.map((h) => fx.single(h.split('.')[0]!, h)));
  await Promise.all(HOSTS.map((h) => fx.ctl.until(h, '/', (r) => r.backend !== undefined, { what: `${h} served` })));
  await waitFor(() => tcpRequest().then(() => true, () => false), { what: 'the TCP service' });
});
test.after(() => fx.stop());

/** An HTTP/1.0 request through the TCP service: resolves with the answer once NGINX closed the session. */
function tcpRequest(): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(tcpPort, '127.0.0.1', () => socket.write('GET /through-tcp HTTP/1.0\r\nHost: tcp\r\n\r\n'));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => { answer += d; });
    socket.on('error', reject);
    socket.on('close', () => (answer.startsWith('HTTP/1.1 200') ? resolve(answer) : reject(new Error(`TCP service answered: ${answer.slice(0, 200)}`))));
  });
}

const logLines = () => readFileSync(fx.accessLog, 'utf8').split('\n');
/** Stream sessions, as the default log-format-stream writes them (`[addr] [time] TCP 200 ...`). */
const streamLines = () => logLines().filter((l) => /^\[[^\]]+\] \[[^\]]+\] TCP \d{3} /.test(l)).length;
const httpLines = (path: string) => logLines().filter((l) => l.includes(path)).length;

/**
 * An HTTP request of `host`, then a TCP session, and whether the access log holds each as
 * `expected` says. A line that should be there is awaited: NGINX writes an HTTP/2 stream's line
 * after it sent the stream's last frame, so the client can read the answer, and the TCP session
 * (another worker, maybe) can close, before the line is written. A line that should be missing is
 * looked for once both closed; a session's line is written before NGINX closes it.
 */
async function assertLogged(p: ProtocolClient, host: string, expected: { http: boolean; stream: boolean }): Promise<void> {
  const path = `/${p.tag}-${Date.now()}`;
  const streamBefore = streamLines();
  assert.is((await p.request(host, path)).status, 200);
  await tcpRequest();
  if (expected.http) await waitFor(() => httpLines(path) > 0, { timeoutMs: 5000, what: `${path} in the access log` }).catch(() => false);
  assert.equal({ http: httpLines(path) > 0, stream: streamLines() > streamBefore }, expected);
}

its.both('annotations/disableaccesslog.go:35', async (p) => {
  await fx.configure({ 'disable-access-log': 'true' });
  await assertLogged(p, 'disableaccesslog.foo.com', { http: false, stream: false });
});

its.both('annotations/disableaccesslog.go:53', async (p) => {
  await fx.configure({ 'disable-http-access-log': 'true' });
  await assertLogged(p, 'disablehttpaccesslog.foo.com', { http: false, stream: true });
});

its.both('annotations/disableaccesslog.go:71', async (p) => {
  await fx.configure({ 'disable-stream-access-log': 'true' });
  await assertLogged(p, 'disablestreamaccesslog.foo.com', { http: true, stream: false });
});

test.run();
