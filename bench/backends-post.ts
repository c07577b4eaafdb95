// NGINX's cost of one endpoint change at 10k backends (real NGINX, our Lua, test/support/lua-nginx.ts), without the controller: a list of
// 10k backends (three endpoints each, ~7 MB as ingress-nginx posts it) posted whole, then 20 endpoint changes of one
// backend, each POST followed by requests until both workers served the new endpoint. `whole`: each change posts the
// whole list (the only way before); `delta`: each posts a change. `HARNESS=<tree>/test/support/lua-nginx.ts` runs
// another tree's Lua (its whole POST). Prints the POST bytes, the median POST wall time, POST → served on both
// workers, and NGINX's CPU (master + workers, /proc) per change.
// The figure of docs/performance.md "Backends posted as changes"; not part of `npm run bench`.
//   node --import tsx bench/backends-post.ts [--whole]
import { readFileSync } from 'node:fs';
import { startEchoServers, closeAll } from '../test/support/echo-server.js';
import type * as Harness from '../test/support/lua-nginx.js';

const mode = process.argv.includes('--whole') ? 'whole' : 'delta';
const { startLuaNginx, backend } = await import(process.env.HARNESS ?? '../test/support/lua-nginx.js') as typeof Harness;
/** Batches of 8 requests until every worker answered (the baseline tree's harness has no such helper). */
async function answersFromEveryWorker(n: Harness.LuaNginx, opts: Harness.RequestOptions): Promise<Harness.HttpReply[]> {
  const workers = (await n.workerPids()).map(String);
  const answers: Harness.HttpReply[] = [];
  const seen = new Set<string>();
  while (!workers.every((pid) => seen.has(pid))) {
    for (const r of await Promise.all(Array.from({ length: 8 }, () => n.request(opts)))) {
      answers.push(r);
      seen.add(String(r.headers['x-worker-pid']));
    }
  }
  return answers;
}
const echo = await startEchoServers(2, { firstOctet: 10 });
const nginx = await startLuaNginx({ workers: 2, locations: [{ path: '/', backend: 'b0' }] });
const list = Array.from({ length: 10000 }, (_, i) => backend(`ns${i % 50}-svc${i}-80`.replace(/^ns0-svc0-80$/, 'b0'), [0, 1, 2].map((k) => ({ address: `10.${k}.${i >> 8}.${i & 255}`, port: '8080' }))));
const post = async (body: string) => { const r = await nginx.status('POST', '/configuration/backends', body); if (r.status !== 201) throw new Error(`${r.status} ${r.body}`); };
const wholeBody = () => (mode === 'whole' && process.env.HARNESS ? JSON.stringify(list) : JSON.stringify({ id: 't0', backends: list }));
await post(wholeBody());
// Both workers have taken up the whole list before the changes are counted.
await answersFromEveryWorker(nginx, { path: '/' });
const workers = await nginx.workerPids();
const pids = [nginx.masterPid, ...workers];
const ticks = () => pids.reduce((s, p) => { const f = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' '); return s + Number(f[11]) + Number(f[12]); }, 0);
const postMs: number[] = []; const servedMs: number[] = []; let bytes = 0;
const t0 = ticks();
for (let r = 0; r < 20; r++) {
  const to = echo[r % 2]!;
  list[0] = backend('b0', [to.endpoint]);
  const body = mode === 'whole' ? (process.env.HARNESS ? JSON.stringify(list) : JSON.stringify({ id: `t${r + 1}`, backends: list }))
    : JSON.stringify({ base: `t${r}`, id: `t${r + 1}`, deleted: [], backends: [list[0]] });
  bytes += body.length;
  const t = performance.now();
  await post(body);
  postMs.push(performance.now() - t);
  // Every worker answers from the new endpoint.
  await answersFromEveryWorker(nginx, { path: '/' });
  while (!(await answersFromEveryWorker(nginx, { path: '/' })).every((a) => a.status === 200 && (JSON.parse(a.body) as { name: string }).name === to.name));
  servedMs.push(performance.now() - t);
}
const cpuMs = (ticks() - t0) * 10 / 20;
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(1);
const max = (xs: number[]) => Math.max(...xs).toFixed(1);
console.log(`${mode}${process.env.HARNESS ? ` (${process.env.HARNESS})` : ''}: POST ${Math.round(bytes / 20)} bytes, median ${med(postMs)} ms (max ${max(postMs)}), POST → served by both workers median ${med(servedMs)} ms (max ${max(servedMs)}), NGINX CPU per change ${cpuMs.toFixed(0)} ms; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
await nginx.stop();
await closeAll(echo);
