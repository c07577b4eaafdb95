// NGINX's cost of one route add at 10k hosts (real NGINX, our Lua, test/support/lua-nginx.ts), without the controller: a table of 10k hosts
// posted whole, then 20 new hosts one at a time, each POST followed by requests until both
// workers served the new host. `whole`: each add posts the whole table (the only way before);
// `delta`: each add posts a change. Prints the median POST wall time, POST → served on both
// workers, and NGINX's CPU (master + workers, /proc) per add.
// The figure of docs/performance.md "Route tables framed per host"; not part of `npm run bench`.
//   node --import tsx bench/route-post.ts [--whole]
import { readFileSync } from 'node:fs';
import { answersFromEveryWorker, startLuaNginx } from '../test/support/lua-nginx.js';

const mode = process.argv.includes('--whole') ? 'whole' : 'delta';
const nginx = await startLuaNginx({
  workers: 2, locations: [], extraInitLua: 'router = require("router")',
  extraLocations: `
    location / {
      content_by_lua_block {
        ngx.header["X-Worker-Pid"] = ngx.worker.pid()
        local uri = router.find()
        ngx.say(uri == "" and "none" or router.proxy_host(true))
      }
    }`,
});
const route = (pattern: string, backend: string, match = 'prefix') => ({ match, pattern, caseless: false, denied: false, namespace: 'app', ingress: 'x', service: backend, port: '80', path: pattern, backend, fallback: '', redirect: '' });
const hosts: Record<string, unknown> = {};
for (let i = 0; i < 10000; i++) hosts[`h${i}.bench.test`] = [route('/', `b${i}`), route('/api', `a${i}`), route(`^/v${i % 7}/`, `r${i}`, 'regex')];
const post = async (body: unknown) => { const r = await nginx.status('POST', '/configuration/routes', JSON.stringify(body)); if (r.status !== 201) throw new Error(`${r.status} ${r.body}`); };
await post({ id: 't0', hosts });
for (let i = 0; i < 10; i++) await answersFromEveryWorker(nginx, { host: `h${i}.bench.test`, path: '/api' });
const workers = await nginx.workerPids();
const pids = [nginx.masterPid, ...workers];
const ticks = () => pids.reduce((s, p) => { const f = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' '); return s + Number(f[11]) + Number(f[12]); }, 0);
const postMs: number[] = []; const servedMs: number[] = [];
const t0 = ticks();
for (let r = 0; r < 20; r++) {
  const name = `new${r}.bench.test`;
  hosts[name] = [route('/', `n${r}`)];
  const t = performance.now();
  await post(mode === 'whole' ? { hosts } : { base: `t${r}`, id: `t${r + 1}`, hosts: { [name]: hosts[name] } });
  postMs.push(performance.now() - t);
  // Batches of 8 requests until every worker answered the new host's backend.
  const served = new Set<string>();
  while (served.size < workers.length) {
    for (const a of await Promise.all(Array.from({ length: 8 }, () => nginx.request({ host: name, path: '/' })))) {
      if (a.body.trim() === `n${r}`) served.add(String(a.headers['x-worker-pid']));
    }
  }
  servedMs.push(performance.now() - t);
}
const cpuMs = (ticks() - t0) * 10 / 20;
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(1);
const max = (xs: number[]) => Math.max(...xs).toFixed(1);
console.log(`${mode}: POST median ${med(postMs)} ms (max ${max(postMs)}), POST → served by both workers median ${med(servedMs)} ms (max ${max(servedMs)}), NGINX CPU per add ${cpuMs.toFixed(0)} ms; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
await nginx.stop();
