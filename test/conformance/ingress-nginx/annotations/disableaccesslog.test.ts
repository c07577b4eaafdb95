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

/** An HTTP request of `host`, then a TCP session, and which of them the access log holds. */
async function logged(p: ProtocolClient, host: string): Promise<{ http: boolean; stream: boolean }> {
  const path = `/${p.tag}-${Date.now()}`;
  const streamBefore = streamLines();
  assert.is((await p.request(host, path)).status, 200);
  // NGINX writes a request's line before it closes the request, and a session's before it closes
  // the connection: once the session closed, both lines are there if they are written at all.
  await tcpRequest();
  return { http: httpLines(path) > 0, stream: streamLines() > streamBefore };
}

its.both('annotations/disableaccesslog.go:35', async (p) => {
  await fx.configure({ 'disable-access-log': 'true' });
  assert.equal(await logged(p, 'disableaccesslog.foo.com'), { http: false, stream: false });
});

its.both('annotations/disableaccesslog.go:53', async (p) => {
  await fx.configure({ 'disable-http-access-log': 'true' });
  assert.equal(await logged(p, 'disablehttpaccesslog.foo.com'), { http: false, stream: true });
});

its.both('annotations/disableaccesslog.go:71', async (p) => {
  await fx.configure({ 'disable-stream-access-log': 'true' });
  assert.equal(await logged(p, 'disablestreamaccesslog.foo.com'), { http: true, stream: false });
});

test.run();
