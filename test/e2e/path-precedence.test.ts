// Who owns a request on a shared host (docs/security.md), through `ingress-rx local` and real
// NGINX: team-b's older Ingress keeps /internal and /admin behind an allowlist. Issue 30,
// finding 1: team-a's younger ImplementationSpecific /internal/ made the same NGINX location as
// team-b's Prefix /internal and won it (200 instead of 403); here the older Ingress keeps it.
// Finding 2: Exact /admin, Exact /internal and Prefix /internal/deep take those requests, as the
// Ingress spec says, but no longer silently: both Ingresses are warned (log, metric, `dbg
// takeovers`), and `lint` says so before anything is applied. A URI `/p` with only a prefix
// location `/p/` gets NGINX's 301 from the router too. path-precedence.static.test.ts runs this
// with every host a server block.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../src/version.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { parsePromText, samples } from '../support/prom-text.js';
import { waitFor } from '../support/wait.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { cliArgs } from '../support/cli-command.js';

const P = 'nginx.ingress.kubernetes.io';
const HOST = 'shared.test';
let ctl: LocalController;
let secret: EchoServer;
let evil: EchoServer;

/** A command of the real CLI: its output and exit status. */
const cli = (...args: string[]): Promise<{ stdout: string; code: number }> =>
  promisify(execFile)(process.execPath, [...cliArgs(), ...args], { cwd: REPO_ROOT })
    .then(({ stdout }) => ({ stdout, code: 0 }), (err: { stdout: string; code: number }) => ({ stdout: err.stdout, code: err.code }));
const taker = (name: string, path: string, pathType: string) => ingress('team-a', name, {
  host: HOST, created: '2026-02-01T00:00:00Z', paths: [{ path, pathType, service: 'evil' }],
});
/** The takeover warnings of the latest sync in the log, as `object: message`. */
function loggedTakeovers(): string[] {
  const lines = ctl.output().split('\n').map((l) => { try { return JSON.parse(l) as { msg?: string }; } catch { return {}; } });
  const last = lines.map((l) => l.msg ?? '').filter((m) => / takes traffic of /.test(m));
  return [...new Set(last)];
}

test.before(async () => {
  secret = await startEchoServer({ address: '127.0.0.2', name: 'secret' });
  evil = await startEchoServer({ address: '127.0.0.3', name: 'evil' });
  ctl = await startLocal({
    files: {
      'team-b.json': [
        service('team-b', 'secret'), ...slices('team-b', 'secret', [secret]),
        ingress('team-b', 'victim', {
          host: HOST, created: '2026-01-01T00:00:00Z', annotations: { [`${P}/whitelist-source-range`]: '10.9.0.0/16' },
          paths: [{ path: '/internal', service: 'secret' }, { path: '/admin', service: 'secret' }, { path: '/', service: 'secret' }],
        }),
      ],
      'team-a.json': [
        service('team-a', 'evil'), ...slices('team-a', 'evil', [evil]),
        taker('same-location', '/internal/', 'ImplementationSpecific'),
        taker('exact-admin', '/admin', 'Exact'),
        taker('exact-internal', '/internal', 'Exact'),
        taker('deeper', '/internal/deep', 'Prefix'),
        taker('reports', '/reports/', 'ImplementationSpecific'),
      ],
    },
  });
  await ctl.until(HOST, '/internal/deep/x', (r) => r.backend === 'evil', { what: "team-a's paths applied" });
  // The warnings of a sync are logged before its "ready" line: all of them are in the output then.
  await waitFor(() => ctl.output().includes('ready: NGINX serves the initial state'), { what: 'the initial sync logged' });
});

test.after(async () => {
  await ctl?.stop();
  await secret?.close();
  await evil?.close();
});

test('finding 1: Prefix /internal and the younger ImplementationSpecific /internal/ are one NGINX location, and the older Ingress keeps it', async () => {
  for (const path of ['/internal/', '/internal/anything', '/internal/x/y']) {
    const r = await ctl.request(HOST, path);
    assert.is(r.status, 403, `${path}: team-b's allowlist answers, not team-a's Service (${r.status} ${r.backend ?? ''})`);
  }
  await ctl.logged('Ingress team-a/same-location: spec.rules: host shared.test location \\"/internal/\\" would duplicate the one from the older Ingress team-b/victim; ignored');
  assert.not.ok(loggedTakeovers().some((m) => m.includes('team-a/same-location')), 'no takeover: it takes nothing');
});

test('finding 2: more specific paths of another namespace win, as the spec says, and both Ingresses are warned with an example', async () => {
  const cases = [
    { name: 'exact-admin', uri: '/admin', says: 'Exact path /admin wins requests that path /admin (location \\"= /admin\\") matches, e.g. /admin' },
    { name: 'exact-internal', uri: '/internal', says: 'Exact path /internal wins requests that path /internal (location \\"= /internal\\") matches, e.g. /internal' },
    { name: 'deeper', uri: '/internal/deep/x', says: 'path /internal/deep (location \\"/internal/deep/\\") wins requests that path /internal (location \\"/internal/\\") matches, e.g. /internal/deep/' },
  ];
  const out = ctl.output();
  for (const c of cases) {
    const r = await ctl.request(HOST, c.uri);
    assert.is(r.backend, 'evil', `${c.uri} goes to team-a/${c.name}`);
    assert.match(out, `Ingress team-a/${c.name}: spec.rules: takes traffic of Ingress team-b/victim (namespace team-b): on host shared.test ${c.says}`);
    assert.match(out, `Ingress team-b/victim: spec.rules: Ingress team-a/${c.name} of namespace team-a takes traffic of this Ingress: on host shared.test ${c.says}`);
  }
  // What the warnings name is what NGINX does: every example goes to the taker.
  for (const m of loggedTakeovers()) {
    const example = /, e\.g\. (\S+)$/.exec(m)![1]!;
    assert.is((await ctl.request(HOST, example)).backend, 'evil', m);
  }
});

test('`/reports` with only a prefix location `/reports/`: NGINX\'s 301 there, from a server block and from the router alike', async () => {
  const r = await ctl.request(HOST, '/reports?x=1');
  assert.is(r.status, 301);
  const location = new URL(String(r.headers.location), `http://${HOST}`);
  assert.is(`${location.pathname}${location.search}`, '/reports/?x=1');
  assert.is((await ctl.request(HOST, '/reports/q')).backend, 'evil');
  assert.is((await ctl.request(HOST, '/reportsx')).status, 403, "team-b's / (behind its allowlist)");
});

test('the takeovers are a metric and `dbg takeovers` lists them', async () => {
  const families = parsePromText((await ctl.request('127.0.0.1', '/metrics', { port: ctl.ports.healthz })).body);
  const takeovers = samples(families, 'ingress_rx_takeovers').map((s) => `${s.labels.namespace}/${s.labels.name} ${s.labels.side} ${s.value}`).sort();
  assert.equal(takeovers, ['team-a/deeper takes 1', 'team-a/exact-admin takes 1', 'team-a/exact-internal takes 1', 'team-a/reports takes 1', 'team-b/victim taken 4']);
  const { stdout } = await cli('dbg', 'takeovers', '--workdir', ctl.workdir);
  assert.match(stdout, 'Ingress team-a/deeper: takes traffic of Ingress team-b/victim (namespace team-b): on host shared.test path /internal/deep');
  assert.match(stdout, 'Ingress team-b/victim: Ingress team-a/exact-admin of namespace team-a takes traffic of this Ingress');
});

test('`lint` says so before it is applied: the takeovers are warnings, the duplicate location an error', async () => {
  const { stdout, code } = await cli('lint', ctl.dir);
  assert.is(code, 1, stdout);
  assert.match(stdout, /Ingress team-a\/same-location.*location "\/internal\/" would duplicate the one from the older Ingress team-b\/victim/);
  for (const name of ['exact-admin', 'exact-internal', 'deeper', 'reports']) assert.match(stdout, new RegExp(`Ingress team-a/${name}.*takes traffic of Ingress team-b/victim`));
});

test.run();
