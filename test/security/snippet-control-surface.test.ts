// Snippets allowed (allow-snippet-annotations, annotations-risk-level Critical), a tenant aims its
// snippets at the controller's own listeners on the node: a server-snippet location's proxy_pass to
// the health and metrics port in several spellings of the node, a stream-snippet's server and
// upstream to it. Real controller in local mode, real NGINX: each snippet is refused by name, no
// request reaches the controller's listener, and the Ingresses (without their snippets) and the
// other tenant are served. Lua in a snippet stays out of scope (docs/security.md).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect } from 'node:net';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { freePorts } from '../support/ports.js';
import { protocolMatrix } from '../support/protocols.js';

const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
const over = protocolMatrix(test, () => ctl);
let victim: EchoServer;
let evil: EchoServer;
/** Ports a stream-snippet would listen on. */
let streamPorts: number[] = [];
/** The spellings of the node a snippet names the health port with. */
// (`localhost` only in the unit test: NGINX would resolve it through the machine's resolver.)
const SPELLINGS = ['127.0.0.1', '[::ffff:127.0.0.1]', '0.0.0.0', '2130706433'];

/** What a raw HTTP request over TCP to 127.0.0.1:`port` gets back (or why it got nothing). */
function rawGet(port: number, path: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let got = '';
    const done = (v: string) => { s.destroy(); resolve(v); };
    s.setTimeout(3000, () => done(got || 'timeout'));
    s.on('connect', () => s.write(`GET ${path} HTTP/1.0\r\nHost: x\r\n\r\n`));
    s.on('data', (d) => { got += d.toString('utf8'); });
    s.on('error', (e: NodeJS.ErrnoException) => done(got || e.code || e.message));
    s.on('close', () => done(got || 'closed'));
  });
}

const METRICS = /nginx_ingress_controller_|# HELP|# TYPE/;

test.before(async () => {
  victim = await startEchoServer({ address: '127.0.0.2', name: 'victim' });
  evil = await startEchoServer({ address: '127.0.0.3', name: 'evil' });
  streamPorts = await freePorts(2);
  ctl = await startLocal({
    args: ['--configmap', 'ingress/nginx'],
    files: {
      'cm.json': [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress' }, data: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } }],
      'team-a.json': [service('team-a', 'web'), ...slices('team-a', 'web', [victim]), ingress('team-a', 'web', { host: 'victim.test', paths: [{ path: '/', service: 'web' }] })],
    },
  });
  await ctl.until('victim.test', '/', (r) => r.backend === 'victim', { what: 'the victim tenant' });
  const healthz = ctl.ports.healthz;
  ctl.write('team-b.json', [
    service('team-b', 'web'), ...slices('team-b', 'web', [evil]),
    ...SPELLINGS.map((spelling, i) => ingress('team-b', `cfg-${i}`, {
      host: `cfg-${i}.evil.test`, paths: [{ path: '/', service: 'web' }],
      annotations: { [`${P}/server-snippet`]: `location /own-metrics { proxy_pass http://${spelling}:${healthz}/metrics; }` },
    })),
    ingress('team-b', 'stream-server', {
      host: 'stream-server.evil.test', paths: [{ path: '/', service: 'web' }],
      annotations: { [`${P}/stream-snippet`]: `server { listen 127.0.0.1:${streamPorts[0]}; proxy_pass 127.0.0.1:${healthz}; }` },
    }),
    ingress('team-b', 'stream-upstream', {
      host: 'stream-upstream.evil.test', paths: [{ path: '/', service: 'web' }],
      annotations: { [`${P}/stream-snippet`]: `upstream own { server [::ffff:7f00:1]:${healthz}; }\nserver { listen 127.0.0.1:${streamPorts[1]}; proxy_pass own; }` },
    }),
    ingress('team-b', 'marker', { host: 'marker.evil.test', paths: [{ path: '/', service: 'web' }] }),
  ]);
  await ctl.until('marker.evil.test', '/', (r) => r.backend === 'evil', { what: "the attacker's objects applied" });
});

test.after(async () => {
  await ctl?.stop();
  await victim?.close();
  await evil?.close();
});

over.both('a server-snippet\'s proxy_pass to the controller\'s own port, in any spelling of the node, is refused by name; the Ingress is served without it', async (p) => {
  for (let i = 0; i < SPELLINGS.length; i++) {
    // Its server block is served once a reload took it: with the snippet, or without it.
    const r = await ctl.until(`cfg-${i}.evil.test`, '/own-metrics', (x) => x.backend === 'evil' || METRICS.test(x.body), { what: `cfg-${i} served` });
    assert.not.match(r.body, METRICS, `${SPELLINGS[i]}: the controller's metrics were served through NGINX`);
    assert.is((await p.request(`cfg-${i}.evil.test`, '/own-metrics')).backend, 'evil', `${SPELLINGS[i]}: the Ingress's own backend answers`);
    await ctl.logged(new RegExp(`Ingress team-b/cfg-${i}.*server-snippet.*proxy_pass.*:${ctl.ports.healthz}: refused by the upstream address policy`), `cfg-${i} refused`);
  }
  const v = await p.request('victim.test', '/');
  assert.is(v.backend, 'victim');
});

over.noRequest('a stream-snippet\'s server or upstream aimed at the controller\'s own port is refused by name; nothing listens for it', 'TCP connections to the stream-snippets\' ports', async () => {
  for (const [name, port] of [['stream-server', streamPorts[0]!], ['stream-upstream', streamPorts[1]!]] as const) {
    const got = await rawGet(port, '/metrics');
    assert.not.match(got, METRICS, `${name}: the controller's metrics were served on ${port}`);
    await ctl.logged(new RegExp(`Ingress team-b/${name}.*stream-snippet.*:${ctl.ports.healthz}: refused by the upstream address policy: port ${ctl.ports.healthz} of this node is one of the controller's own listeners`), `${name} refused`);
  }
});

test.run();
