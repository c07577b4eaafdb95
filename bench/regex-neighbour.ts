// One tenant's regex, the other tenants' latency: `ingress-rx local` with a victim Ingress (a
// dynamic host and a static one) and an attacker whose use-regex path is issue 30's
// `/r/(a|aa)+$` on a host with a server block of its own (NGINX's PCRE2 runs it). The victim's p99
// is measured quiet, then while eight connections send the attacker's worst-case input to its own
// host. With the cost check the path is refused (the requests meet the default backend); without
// it each costs a worker ~0.2 s. Goal: loaded p99 within 2x of the quiet one.
//   node --import tsx bench/regex-neighbour.ts [--full]
import { Agent, request } from 'node:http';
import { startEchoServer } from '../test/support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../test/support/local-harness.js';
import { emitFigures, isFull, loadAverage, percentile, printTable, round, verdict, type Row } from './lib.js';

const P = 'nginx.ingress.kubernetes.io';
const ATTACK_PATH = `/r/${'a'.repeat(30)}!`;

function get(agent: Agent, port: number, host: string, path: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { Host: host }, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Victim latencies (ms) over `seconds`, one client per host, back to back. */
async function victimLatencies(ctl: LocalController, seconds: number): Promise<number[]> {
  const out: number[] = [];
  const until = Date.now() + seconds * 1000;
  await Promise.all(['victim.test', 'victim-static.test'].map(async (host) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    while (Date.now() < until) out.push(await get(agent, ctl.ports.http, host, '/'));
    agent.destroy();
  }));
  return out;
}

/** Eight connections sending the attacker's worst case until `stop()`. */
function attack(ctl: LocalController): { stop(): Promise<number> } {
  let running = true;
  let sent = 0;
  const loops = Array.from({ length: 8 }, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    while (running) {
      await get(agent, ctl.ports.http, 'attacker.test', ATTACK_PATH).catch(() => 0);
      sent++;
    }
    agent.destroy();
  });
  return { async stop() { running = false; await Promise.all(loops); return sent; } };
}

async function main(): Promise<void> {
  const seconds = isFull() ? 20 : 6;
  const rows: Row[] = [];
  const web = await startEchoServer({ address: '127.0.0.2', name: 'web' });
  const ctl = await startLocal({
    args: ['--log-level', 'warn'],
    files: {
      'bench.json': [
        service('victim', 'web'), ...slices('victim', 'web', [web]),
        ingress('victim', 'dynamic', { host: 'victim.test', paths: [{ path: '/', service: 'web' }] }),
        ingress('victim', 'static', { host: 'victim-static.test', paths: [{ path: '/', service: 'web' }], annotations: { [`${P}/server-alias`]: 'alias-victim.test' } }),
        service('attacker', 'web'), ...slices('attacker', 'web', [web]),
        ingress('attacker', 'regex', {
          host: 'attacker.test', paths: [{ path: '/r/(a|aa)+$', pathType: 'ImplementationSpecific', service: 'web' }],
          annotations: { [`${P}/use-regex`]: 'true', [`${P}/server-alias`]: 'alias-attacker.test' },
        }),
      ],
    },
  });
  try {
    await ctl.until('victim-static.test', '/', (r) => r.backend === 'web', { what: 'the static victim' });
    await ctl.until('victim.test', '/', (r) => r.backend === 'web', { what: 'the dynamic victim' });
    const refused = /\/r\/\(a\|aa\)\+\$[^\n]*backtrack catastrophically/.test(ctl.output());
    const quiet = await victimLatencies(ctl, seconds);
    const a = attack(ctl);
    const loaded = await victimLatencies(ctl, seconds);
    const attacks = await a.stop();
    const quietP99 = percentile(quiet, 99);
    const loadedP99 = percentile(loaded, 99);
    const ratio = loadedP99 / quietP99;
    rows.push(
      { figure: 'victim p99, quiet', value: `${round(quietP99, 2)} ms`, note: `${quiet.length} requests` },
      { figure: 'regex_neighbour_p99_ms', value: `${round(loadedP99, 2)} ms`, target: `≤ 2× quiet (${round(2 * quietP99, 2)} ms)`, status: verdict(ratio, 2), note: `${loaded.length} requests; ${attacks} attack requests; load ${loadAverage()}` },
      { figure: 'attacker path refused by the cost check', value: String(refused) },
    );
    printTable('One tenant\'s regex, other tenants\' latency', rows);
    emitFigures({ regex_neighbour_p99_ms: round(loadedP99, 2), regex_neighbour_quiet_p99_ms: round(quietP99, 2), regex_neighbour_ratio: round(ratio, 2) });
  } finally {
    await ctl.stop();
    await web.close();
  }
}

await main();
