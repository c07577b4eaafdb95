// Property, through `ingress-rx local` and real NGINX: random path sets (pathTypes, trailing
// slashes, regex where allowed) of Ingresses across namespaces on shared hosts go where the rule
// says (test/support/path-precedence.ts, written from docs/security.md, not from src/model), and
// every request one namespace wins over an older Ingress of another is warned on both Ingresses
// in the controller's log. Every Ingress has its own echo backend, so a reply names the Ingress
// NGINX chose. Seeded (PROPERTY_SEED reproduces a run), bounded (PROPERTY_HOSTS hosts, a few
// hundred requests). path-precedence-property.static.test.ts runs it with every host a server block.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, DYNAMIC_ROUTES_ARGS, type LocalController } from '../support/local-harness.js';
import { precedence, probeURIs, randomHost, type HostIngress } from '../support/path-precedence.js';
import { seededRandom } from '../support/random.js';
import { waitFor } from '../support/wait.js';

const SEED = Number(process.env.PROPERTY_SEED ?? 30_7);
const HOSTS = Number(process.env.PROPERTY_HOSTS ?? 10);
const P = 'nginx.ingress.kubernetes.io';
const r = seededRandom(SEED);
const hosts = Array.from({ length: HOSTS }, (_, h) => ({ name: `p${h}.test`, ings: randomHost(r, `h${h}`) }));
let ctl: LocalController;
let echo: EchoServer;
const servers = new Map<string, EchoServer>();

test.before(async () => {
  const objects: object[] = [];
  let n = 0;
  for (const { name: host, ings } of hosts) {
    for (const ing of ings) {
      const [ns, name] = ing.key.split('/') as [string, string];
      const backend = await startEchoServer({ address: '127.0.0.2', name: ing.key });
      servers.set(ing.key, backend);
      objects.push(service(ns, name), ...slices(ns, name, [backend]), ingress(ns, name, {
        host, created: new Date(Date.UTC(2026, 0, 1, 0, 0, n++)).toISOString(),
        annotations: ing.regex ? { [`${P}/use-regex`]: 'true' } : {},
        paths: ing.paths.map((p) => ({ path: p.path, pathType: p.pathType, service: name })),
      }));
    }
  }
  echo = await startEchoServer({ address: '127.0.0.2', name: 'ready' });
  objects.push(service('ready', 'ready'), ...slices('ready', 'ready', [echo]), ingress('ready', 'ready', {
    host: 'ready.test', created: '2026-12-01T00:00:00Z', paths: [{ path: '/', service: 'ready' }],
  }));
  ctl = await startLocal({ files: { 'hosts.json': objects } });
  await ctl.until('ready.test', '/', (reply) => reply.backend === 'ready', { what: 'every Ingress applied' });
  // The warnings of a sync are logged before its "ready" line: all of them are in the output then.
  await waitFor(() => ctl.output().includes('ready: NGINX serves the initial state'), { what: 'the initial sync logged' });
});

test.after(async () => {
  await ctl?.stop();
  await echo?.close();
  await Promise.all([...servers.values()].map((s) => s.close()));
});

/** The takeover pairs the log names (taker -> victim), from the warnings on both sides, and the examples. */
function logged(): { taking: Set<string>; taken: Set<string>; examples: Map<string, string> } {
  const taking = new Set<string>();
  const taken = new Set<string>();
  const examples = new Map<string, string>();
  for (const line of ctl.output().split('\n')) {
    let msg: string;
    try { msg = String((JSON.parse(line) as { msg?: string }).msg ?? ''); } catch { continue; }
    const t = /^Ingress (\S+): spec\.rules: takes traffic of Ingress (\S+) \(namespace \S+\): on host (\S+) .*, e\.g\. (\S+)$/.exec(msg);
    if (t) { taking.add(`${t[1]} -> ${t[2]}`); examples.set(`${t[1]} -> ${t[2]}`, `${t[3]} ${t[4]}`); }
    const v = /^Ingress (\S+): spec\.rules: Ingress (\S+) of namespace \S+ takes traffic of this Ingress: /.exec(msg);
    if (v) taken.add(`${v[2]} -> ${v[1]}`);
  }
  return { taking, taken, examples };
}

test(`random path sets on ${HOSTS} shared hosts (seed ${SEED}): NGINX sends each request where the rule says, and every cross-namespace win is warned on both Ingresses`, async () => {
  const log = logged();
  const dynamic = DYNAMIC_ROUTES_ARGS.length === 0;
  let requests = 0;
  let wins = 0;
  for (const { name: host, ings } of hosts) {
    const rule = precedence(ings);
    const ctx = (uri: string) => `seed ${SEED} (${dynamic ? 'dynamic' : 'static'} hosts) ${host}${uri}; the host: ${JSON.stringify(ings)}`;
    const examples = [...log.examples.values()].filter((e) => e.startsWith(`${host} `)).map((e) => e.slice(host.length + 1));
    for (const uri of probeURIs(ings, examples)) {
      requests++;
      const owner = rule.owner(uri);
      const reply = await ctl.request(host, uri);
      const redirect = rule.redirect(uri);
      if (redirect !== null) {
        assert.is(reply.status, 301, `${ctx(uri)}: NGINX's 301 to ${redirect}`);
        assert.is(new URL(String(reply.headers.location), `http://${host}`).pathname, redirect, ctx(uri));
      } else if (owner === null) assert.is(reply.status, 404, `${ctx(uri)}: no path matches: ${reply.status} ${reply.backend ?? ''}`);
      else assert.is(reply.backend, ings[owner]!.key, ctx(uri));
      for (const v of rule.takenFrom(uri)) {
        wins++;
        const pair = `${ings[owner!]!.key} -> ${ings[v]!.key}`;
        assert.ok(log.taking.has(pair) && log.taken.has(pair), `${ctx(uri)}: ${pair} is warned on both Ingresses`);
      }
    }
    // Every pair the log names on this host is one the rule has a request for.
    for (const [pair, example] of log.examples) {
      if (!example.startsWith(`${host} `)) continue;
      const [taker, victim] = pair.split(' -> ') as [string, string];
      const uri = example.slice(host.length + 1);
      assert.ok(rule.takenFrom(uri).map((v) => ings[v]!.key).includes(victim) && ings[rule.owner(uri)!]!.key === taker, `${ctx(uri)}: the log's ${pair}`);
    }
  }
  assert.ok(requests <= 600, `bounded: ${requests} requests`);
  assert.ok(wins > 0, `the generator makes cross-namespace wins (${wins} in ${requests} requests)`);
});

test.run();
