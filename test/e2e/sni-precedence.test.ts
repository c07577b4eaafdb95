// SNI is owned like Host (docs/security.md), through `ingress-rx local --enable-ssl-passthrough`,
// real NGINX and real TLS. Issue 30, finding 7: team-a's younger ssl-passthrough Ingress for
// *.a.test received the TLS connections of team-b's older www.a.test, and of a.test hosts added
// later, because the SNI map had no entry for them, while the log, `lint` and the webhook said
// www.a.test "is served instead of the wildcard". Here a name some server has goes to NGINX's
// HTTPS, the wildcard takes only names no server has, one label deep as its server block does, and
// a test checks that what the log, `lint` and the admission review say is what the connections
// do. sni-precedence.static.test.ts runs it with every host a server block and --host-ownership.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server as TlsServer } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { REPO_ROOT } from '../../src/version.js';
import { createReviewer } from '../../src/admission/review.js';
import type { Ingress } from '../../src/store/kube-types.js';
import { testStore, PREFIX } from '../support/model-objects.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate } from '../support/lua-nginx.js';
import { freePort } from '../support/ports.js';
import { waitFor } from '../support/wait.js';
import { tlsExchange } from '../support/tls-exchange.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { cliArgs } from '../support/cli-command.js';

const HOST_OWNERSHIP = process.env.IRX_TEST_SNI_HOST_OWNERSHIP === '1';
const P = 'nginx.ingress.kubernetes.io';
const certDir = mkdtempSync(join(tmpdir(), 'irx-sni-'));
let ctl: LocalController;
let web: EchoServer;
let tenant: TlsServer;
const objects: Record<string, object[]> = {};

const teamB = (name: string, host: string, created: string) => ingress('team-b', name, { host, created, paths: [{ path: '/', service: 'web' }] });

test.before(async () => {
  web = await startEchoServer({ address: '127.0.0.2', name: 'team-b' });
  const own = await generateCertificate(certDir, 'wild.a.test', ['*.a.test']);
  tenant = createServer({ cert: readFileSync(own.certPath), key: readFileSync(own.keyPath) }, (socket) => {
    socket.end('HTTP/1.1 200 OK\r\ncontent-length: 14\r\nconnection: close\r\n\r\nteam-a backend');
  });
  await new Promise<void>((r) => tenant.listen(0, '127.0.0.1', r));
  objects['team-b.json'] = [service('team-b', 'web'), ...slices('team-b', 'web', [web]), teamB('www', 'www.a.test', '2026-01-01T00:00:00Z')];
  objects['team-a.json'] = [
    service('team-a', 'tls'), ...slices('team-a', 'tls', [{ address: '127.0.0.1', port: (tenant.address() as AddressInfo).port }]),
    ingress('team-a', 'wild', { host: '*.a.test', created: '2026-02-01T00:00:00Z', annotations: { [`${P}/ssl-passthrough`]: 'true' }, paths: [{ path: '/', service: 'tls' }] }),
  ];
  ctl = await startLocal({
    args: ['--enable-ssl-passthrough', '--ssl-passthrough-proxy-port', String(await freePort()), ...(HOST_OWNERSHIP ? ['--host-ownership'] : [])],
    files: objects,
  });
  await ctl.until('www.a.test', '/', (r) => r.backend === 'team-b', { what: 'www.a.test served' });
});

test.after(async () => {
  await ctl?.stop();
  await web?.close();
  tenant?.close();
  rmSync(certDir, { recursive: true, force: true });
});

/** Who answers a TLS connection with this SNI on the HTTPS port: team-a's own TLS backend, or NGINX (and then which backend). */
async function tlsOwner(servername: string): Promise<string> {
  const { cn, text } = await tlsExchange(ctl.ports.https, servername);
  if (cn === 'wild.a.test') return text.endsWith('team-a backend') ? 'team-a passthrough' : `team-a's certificate, answer ${text.slice(0, 80)}`;
  return `nginx ${/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]} ${/"name":"([^"]+)"/.exec(text)?.[1] ?? ''}`.trim();
}

/** What the words say: names said to be served instead of the wildcard host *.a.test. */
const saidServedInstead = (text: string) => new Set([...text.matchAll(/host (\S+) is served instead of the wildcard host \*\.a\.test/g)].map((m) => m[1]!));

/** What the admission review says about each Ingress, against a store of the same manifests. */
function reviewed(): string {
  const store = testStore();
  for (const list of Object.values(objects)) for (const o of list as Array<{ kind: string }>) store.put(o.kind as never, o as never);
  const reviewer = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, hostOwnership: HOST_OWNERSHIP });
  return Object.values(objects).flat().filter((o) => (o as { kind: string }).kind === 'Ingress')
    .flatMap((o) => reviewer.review(o as Ingress).findings.map((f) => f.message)).join('\n');
}

test('finding 7: an older host of another namespace under a passthrough wildcard keeps its TLS; the wildcard gets the names no server has', async () => {
  assert.is(await tlsOwner('www.a.test'), 'nginx 200 team-b');
  assert.is(await tlsOwner('x.a.test'), 'team-a passthrough');
  // Two labels below the wildcard: its server block would not serve it either.
  assert.is(await tlsOwner('deep.x.a.test'), 'nginx 404');
});

test('finding 7: a host added later under the wildcard keeps its TLS too', async () => {
  objects['team-b-later.json'] = [teamB('later', 'later.a.test', '2026-03-01T00:00:00Z')];
  ctl.write('team-b-later.json', objects['team-b-later.json']);
  await ctl.until('later.a.test', '/', (r) => r.backend === 'team-b', { what: 'later.a.test served over HTTP' });
  // Its name joins the SNI map with a reload (`ssl-passthrough names changed`), maybe after HTTP serves it.
  let owner = '';
  try {
    await waitFor(async () => (owner = await tlsOwner('later.a.test')) === 'nginx 200 team-b', { timeoutMs: 15_000, what: 'later.a.test over TLS' });
  } catch {
    assert.is(owner, 'nginx 200 team-b');
  }
});

test('what the log, `lint` and the admission review say about the wildcard is what the TLS connections do', async () => {
  const { stdout: lint } = await promisify(execFile)(process.execPath, [
    ...cliArgs(), 'lint', ctl.dir, ...(HOST_OWNERSHIP ? ['--host-ownership'] : []),
  ], { cwd: REPO_ROOT }).catch((err: { stdout: string }) => ({ stdout: err.stdout }));
  const said = { log: saidServedInstead(ctl.output()), lint: saidServedInstead(lint), review: saidServedInstead(reviewed()) };
  assert.equal([...said.log].sort(), ['later.a.test', 'www.a.test'], ctl.output().slice(-3000));
  assert.equal([...said.lint].sort(), [...said.log].sort(), lint);
  assert.equal([...said.review].sort(), [...said.log].sort());
  for (const name of ['www.a.test', 'later.a.test', 'x.a.test', 'api.a.test']) {
    const owner = await tlsOwner(name);
    if (said.log.has(name)) assert.is(owner, 'nginx 200 team-b', `${name} is said to be served instead of the wildcard`);
    else assert.is(owner, 'team-a passthrough', `${name} is no server's name: the wildcard's`);
  }
});

test.run();
