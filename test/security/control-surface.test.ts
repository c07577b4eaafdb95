// Attacks on the control surface from one tenant's namespace, against the real controller in
// local mode with real NGINX: upstreams that point back at the node in every spelling (via an
// ExternalName Service and via an EndpointSlice) aimed at the status port, requests to the
// control server without its token, and garbage for the configuration endpoint. Each attack
// fails and the victim tenant keeps being served.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate, type GeneratedCertificate } from '../support/lua-nginx.js';
import { ingress, service, slices, startLocal, tlsSecret, type LocalController, type Reply } from '../support/local-harness.js';
import { controlRequest } from '../../src/actors/control-client.js';
import { defaultRuntime } from '../../src/render/runtime.js';
import { protocolMatrix } from '../support/protocols.js';

/** The spellings of issue 14 that reach the node: as an ExternalName, and as an EndpointSlice address. */
const SPELLINGS = ['0.0.0.0', '::', '::ffff:127.0.0.1', '::ffff:7f00:1', '127.000.000.001', '0177.0.0.1', '2130706433', 'localhost.'];
const SLICE_SPELLINGS = SPELLINGS.filter((s) => s !== 'localhost.');

let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let victim: EchoServer;
let marker: EchoServer;
let cert: GeneratedCertificate;
const certDir = mkdtempSync(join(tmpdir(), 'irx-sec-certs-'));
const P = 'nginx.ingress.kubernetes.io';
const attackHosts: Array<{ host: string; via: string; spelling: string }> = [];

const victimServed = async (what: string) => {
  const r = await ctl.request('victim.test', '/still-here');
  assert.is(r.status, 200, `${what}: victim.test answered ${r.status}`);
  assert.is(r.backend, 'victim', what);
};

test.before(async () => {
  victim = await startEchoServer({ address: '127.0.0.2', name: 'victim' });
  marker = await startEchoServer({ address: '127.0.0.3', name: 'marker' });
  cert = await generateCertificate(certDir, 'victim.test');
  ctl = await startLocal({
    files: {
      'team-a.json': [
        service('team-a', 'web'), ...slices('team-a', 'web', [victim]),
        tlsSecret('team-a', 'victim-tls', readFileSync(cert.certPath, 'utf8'), readFileSync(cert.keyPath, 'utf8')),
        ingress('team-a', 'web', { host: 'victim.test', annotations: { [`${P}/ssl-redirect`]: 'false' }, tls: [{ hosts: ['victim.test'], secretName: 'victim-tls' }], paths: [{ path: '/', service: 'web' }] }),
      ],
    },
  });
  await ctl.until('victim.test', '/', (r) => r.status === 200 && r.backend === 'victim', { what: 'the victim tenant' });

  // The attacker's namespace: one host per spelling, each upstream aimed at the status port.
  const status = ctl.ports.status;
  const objects: object[] = [];
  SPELLINGS.forEach((spelling, i) => {
    const host = `xn-${i}.evil.test`;
    attackHosts.push({ host, via: `Service team-b/xn-${i}`, spelling });
    objects.push(service('team-b', `xn-${i}`, { type: 'ExternalName', externalName: spelling, port: status }));
    objects.push(ingress('team-b', `xn-${i}`, { host, paths: [{ path: '/', service: `xn-${i}`, port: status }] }));
  });
  SLICE_SPELLINGS.forEach((spelling, i) => {
    const host = `es-${i}.evil.test`;
    attackHosts.push({ host, via: `EndpointSlice team-b/es-${i}-0`, spelling });
    objects.push({ apiVersion: 'v1', kind: 'Service', metadata: { name: `es-${i}`, namespace: 'team-b' }, spec: { ports: [{ name: 'http', port: 80, targetPort: status }] } });
    objects.push({
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
      metadata: { name: `es-${i}-0`, namespace: 'team-b', labels: { 'kubernetes.io/service-name': `es-${i}` } },
      addressType: spelling.includes(':') ? 'IPv6' : 'IPv4',
      ports: [{ name: 'http', port: status }],
      endpoints: [{ addresses: [spelling], conditions: { ready: true } }],
    });
    objects.push(ingress('team-b', `es-${i}`, { host, paths: [{ path: '/', service: `es-${i}` }] }));
  });
  // A plain host in the same file: served once the attacker's objects are applied.
  objects.push(service('team-b', 'marker'), ...slices('team-b', 'marker', [marker]), ingress('team-b', 'marker', { host: 'marker.evil.test', paths: [{ path: '/', service: 'marker' }] }));
  ctl.write('team-b.json', objects);
  await ctl.until('marker.evil.test', '/', (r) => r.backend === 'marker', { what: "the attacker's objects applied" });
});

test.after(async () => {
  await ctl?.stop();
  await victim?.close();
  await marker?.close();
  rmSync(certDir, { recursive: true, force: true });
});

over.both('no spelling of the node, via ExternalName or EndpointSlice, reaches the control server', async (p) => {
  const reached: string[] = [];
  const refusals: string[] = [];
  for (const { host, via, spelling } of attackHosts) {
    // A few tries: each NGINX worker syncs ExternalName backends in its own timer.
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = reached.length;
      const certs: Reply = await p.request(host, `/configuration/certs?hostname=victim.test`);
      const conf = await p.request(host, '/nginx.conf');
      const write = await p.request(host, '/configuration/backends', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify([{ name: 'team-a-web-80', endpoints: [{ address: '127.0.0.1', port: '9' }] }]),
      });
      if (certs.status === 200 || /PRIVATE KEY|BEGIN CERTIFICATE/.test(certs.body)) reached.push(`${via} (${spelling}): the victim's certificate and key`);
      if (/server_name|upstream_balancer/.test(conf.body)) reached.push(`${via} (${spelling}): nginx.conf`);
      if (write.status === 201) reached.push(`${via} (${spelling}): POST /configuration/backends`);
      // No endpoint at all: 503 from the rewrite phase.
      if (certs.status !== 503) reached.push(`${via} (${spelling}): answered ${certs.status}, not 503`);
      if (reached.length > before) break;
    }
    refusals.push(`${via}: .*${spelling.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.* refused`);
  }
  assert.equal(reached, []);
  // The model gave Lua nothing to dial for any of them.
  const posted = JSON.parse((await ctl.control('/configuration/backends')).body) as Array<{ name: string; endpoints: unknown[] }>;
  const attackers = posted.filter((b) => /^team-b-(xn|es)-/.test(b.name));
  assert.is(attackers.length, attackHosts.length);
  for (const b of attackers) assert.equal(b.endpoints, [], b.name);
  await victimServed('after the attacks');
  // Each refusal is a warning naming the Service or EndpointSlice and the address.
  for (const r of refusals) await ctl.logged(new RegExp(r), r);
});

over.noRequest('the control server: no TCP port, a private socket directory, every path refused without the token', "the control server's socket", async () => {
  const refused = await new Promise<boolean>((resolve) => {
    const s = connect(ctl.ports.status, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(false); });
    s.once('error', () => resolve(true));
  });
  assert.ok(refused, 'nothing listens on the status port');
  const rt = defaultRuntime({ prefix: ctl.workdir });
  assert.is(statSync(join(ctl.workdir, 'run')).mode & 0o777, 0o700);
  assert.is(statSync(rt.controlTokenPath).mode & 0o777, 0o600);
  const token = readFileSync(rt.controlTokenPath, 'utf8').trim();
  assert.ok(token.length >= 32);

  const paths = ['/configuration/certs?hostname=victim.test', '/configuration/backends', '/configuration/general', '/configuration/routes', '/nginx.conf',
    '/configuration-checksum', '/nginx_status', '/is-dynamic-lb-initialized', '/healthz', '/anything'];
  const wrong = { socketPath: rt.controlSocketPath, token: () => token.replace(/./, (c) => (c === 'a' ? 'b' : 'a')) };
  for (const path of paths) {
    const anonymous = await ctl.control(path, { anonymous: true });
    assert.is(anonymous.status, 401, `${path} without the token`);
    assert.not.match(anonymous.body, /PRIVATE KEY|server_name/);
    assert.is((await controlRequest(wrong, 'GET', path)).status, 401, `${path} with a wrong token`);
  }
  assert.is((await ctl.control('/configuration/backends', { method: 'POST', body: '[]', anonymous: true })).status, 401);

  // With the token, the operator's view works, and the token is nowhere in what is served.
  const conf = await ctl.control('/nginx.conf');
  assert.is(conf.status, 200);
  // The victim is a server block, or (dynamic routes) the route table's.
  assert.ok(conf.body.includes('server_name victim.test') || (await ctl.control('/configuration/routes')).body.includes('"victim.test"'));
  assert.not.ok(conf.body.includes(token), 'the token is not in nginx.conf');
  assert.match((await ctl.control('/configuration/certs?hostname=victim.test')).body, /PRIVATE KEY/, 'dbg certs get works for the operator');
  assert.is((await ctl.control('/nginx_status')).status, 200);
  await victimServed('after the control server probes');
});

over.both('garbage posted to the configuration endpoint is refused and every host keeps its backends', async (p) => {
  for (const body of ['[1,"x",null,{"name":5}]', '[{"name":"team-a-web-80","endpoints":"x"}]', '{"certificates":{"u":"x"},"servers":{"victim.test":"u"}}']) {
    const path = body.startsWith('{') ? '/configuration/servers' : '/configuration/backends';
    const r = await ctl.control(path, { method: 'POST', body });
    assert.is(r.status, 400, `${path} ${body}: ${r.body}`);
  }
  await victimServed('after the garbage');
  const https = await p.request('victim.test', '/', { https: true, ca: readFileSync(cert.certPath, 'utf8') });
  assert.is(https.status, 200, 'the victim certificate is still served');
});

test.run();
