// ingress-nginx test/e2e/settings/proxy_protocol.go, its It for TCP (the others are in
// proxy_protocol.test.ts, through local mode), ported against the fake API server, as a TCP
// service comes from --tcp-services-configmap: with use-proxy-protocol, a tcp-services entry
// `<namespace>/<service>:<port>:PROXY` takes the client's PROXY header, so the stream access log
// names the address the header gives, not the connection's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { configMap, startClusterFixture, type ClusterFixture } from '../fixture.js';
import { ported } from '../port.js';
import type { CliProcess } from '../../../support/local-harness.js';
import { freePort } from '../../../support/ports.js';
import { waitFor } from '../../../support/wait.js';

const NS = 'proxy-protocol-tcp';
let cluster: ClusterFixture;
let ctl: CliProcess;
let port: number;
const its = ported(test, () => ctl);

test.before(async () => {
  cluster = await startClusterFixture();
  cluster.echoService(NS);
  port = await freePort();
  cluster.fake.create(configMap(NS, 'ingress-nginx-controller', { 'use-proxy-protocol': 'true', 'enable-real-ip': 'true' }));
  cluster.fake.create(configMap(NS, 'tcp-services', { [String(port)]: `${NS}/echo:80:PROXY` }));
  ctl = await cluster.controller([`--watch-namespace=${NS}`, `--configmap=${NS}/ingress-nginx-controller`, `--tcp-services-configmap=${NS}/tcp-services`]);
});
test.after(() => cluster.stop());

/** Sends a PROXY header and an HTTP request over TCP to the service's port; resolves with what came back. */
function exchange(): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.write(`PROXY TCP4 192.168.0.1 192.168.0.11 56324 ${port}\r\n`);
      s.write('GET / HTTP/1.1\r\nHost: proxy-protocol\r\nConnection: close\r\n\r\n');
    });
    let data = '';
    s.on('data', (d) => { data += d; });
    s.on('end', () => resolve(data));
    s.on('error', reject);
  });
}

its.noClient('settings/proxy_protocol.go:165', 'a TCP service: raw bytes after a PROXY header', async () => {
  const answer = await waitFor(async () => {
    const a = await exchange().catch(() => '');
    return a.startsWith('HTTP/1.1 200') ? a : null;
  }, { what: `the TCP service on port ${port}` });
  assert.match(answer, 'HTTP/1.1 200');
  const log = await waitFor(() => {
    const lines = readFileSync(`${ctl.workdir}/logs/access.log`, 'utf8').split('\n').filter((l) => l.includes('TCP'));
    return lines.length > 0 ? lines : null;
  }, { what: 'the stream access log line' });
  assert.ok(log.some((l) => l.startsWith('[192.168.0.1]')), log.join('\n'));
});

test.run();
