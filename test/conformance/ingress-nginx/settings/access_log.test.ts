// ingress-nginx test/e2e/settings/access_log.go, ported: where NGINX writes the http context's
// access log (upstreaminfo lines) and the stream context's (log_stream lines), by access-log-path,
// http-access-log-path and stream-access-log-path. The e2e test reads nginx.conf; the port finds
// each line in its file: a request's line with its path, and the line of a TLS session through
// the stream context. ingress-rx has a stream context only when it proxies something there, so
// the controller runs with --enable-ssl-passthrough and one ssl-passthrough Ingress: every HTTPS
// connection then passes its SNI stream server. Without a path, local mode logs in its workdir
// (docs/differences.md, "Access log"), where ingress-nginx's image logs to /var/log/nginx.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { freePort } from '../../../support/ports.js';
import { waitFor } from '../../../support/wait.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'access-log.test';
const logDir = mkdtempSync(join(tmpdir(), 'irx-access-log-'));
const ACCESS = join(logDir, 'access.log');
const HTTP = join(logDir, 'http-access.log');
const STREAM = join(logDir, 'stream-access.log');

test.before(async () => {
  fx = await startFixture('access-log', {
    configmap: {},
    args: ['--enable-ssl-passthrough', '--ssl-passthrough-proxy-port', String(await freePort())],
  });
  fx.apply('ingress.json', [fx.single('access-log', HOST), fx.single('passthrough', 'passthrough.access-log.test', { 'ssl-passthrough': 'true' })]);
  await fx.ctl.until(HOST, '/', (r) => r.status === 200);
});
test.after(async () => {
  await fx.stop();
  rmSync(logDir, { recursive: true, force: true });
});

const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
const since = (file: string, offset: number) => (existsSync(file) ? readFileSync(file).subarray(offset).toString('utf8') : '');
/** A log_stream line (its default format): `[client] [time] TCP status sent received duration`. */
const STREAM_LINE = /^\[127\.0\.0\.1\] \[[^\]]+\] TCP \d{3} \d+ \d+ [\d.]+$/m;

/** A request over `p` and an HTTPS one (a session of the stream context); the lines they add to the http and stream logs. */
async function logLines(p: ProtocolClient, httpLog: string, streamLog: string): Promise<{ http: string; stream: string; path: string }> {
  const path = `/access-log/${p.protocol.replace('/', '')}/${Date.now()}`;
  const [h0, s0] = [size(httpLog), size(streamLog)];
  assert.is((await p.request(HOST, path)).status, 200);
  if (p.scheme === 'http') assert.is((await p.request(HOST, path, { https: true })).status, 200);
  // NGINX writes a session's stream line when the connection closes, just after the answer.
  return waitFor(() => {
    const http = since(httpLog, h0);
    const stream = since(streamLog, s0);
    return http.includes(path) && STREAM_LINE.test(stream) ? { http, stream, path } : null;
  }, { what: `the request's line in ${httpLog} and a TLS session's in ${streamLog}` });
}

its.both('settings/access_log.go:31', async (p) => {
  await fx.configure({});
  const { http, stream } = await logLines(p, fx.accessLog, fx.accessLog);
  assert.ok(http.length > 0 && stream.length > 0);
});

its.both('settings/access_log.go:41', async (p) => {
  await fx.configure({ 'access-log-path': ACCESS });
  const before = size(fx.accessLog);
  await logLines(p, ACCESS, ACCESS);
  assert.is(size(fx.accessLog), before, 'nothing more in the default log');
});

its.both('settings/access_log.go:52', async (p) => {
  await fx.configure({ 'http-access-log-path': HTTP });
  const { http } = await logLines(p, HTTP, fx.accessLog);
  assert.not.match(http, STREAM_LINE, 'no stream line in the http log');
});

its.both('settings/access_log.go:64', async (p) => {
  await fx.configure({ 'stream-access-log-path': STREAM });
  const { stream, path } = await logLines(p, fx.accessLog, STREAM);
  assert.not.ok(stream.includes(path), 'no request line in the stream log');
});

its.both('settings/access_log.go:76', async (p) => {
  await fx.configure({ 'http-access-log-path': HTTP, 'stream-access-log-path': STREAM });
  const { http, stream, path } = await logLines(p, HTTP, STREAM);
  assert.not.match(http, STREAM_LINE);
  assert.not.ok(stream.includes(path));
});

test.run();
