import { writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { startLocalMode } from './local-mode.js';
import { ingress, service, slices, tlsSecret, sendRequest } from '../test/support/local-harness.js';
import { benchCertificate, CACHE_DIR } from './gen.js';
import { startNginx, upstreamConf } from './nginx-tools.js';
import { waitFor } from '../test/support/wait.js';
const HOST = 'dp.bench.example';
const { cert, key } = benchCertificate();
const dir = '/tmp/dp/prof'; mkdirSync(join(dir, 'up/logs'), { recursive: true }); mkdirSync(join(dir, 'plain/logs'), { recursive: true });
writeFileSync(join(dir, 'up/nginx.conf'), upstreamConf(join(dir, 'up'), [18289]));
const up = startNginx(join(dir, 'up'), join(dir, 'up/nginx.conf'));
const conf = process.env.CONF ?? '';
const local = await startLocalMode({ prefix: 'irx-prof-', fill: (m) => writeFileSync(join(m, 'site.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
  service('default', 'be'), ...slices('default', 'be', [{ address: '127.0.0.1', port: 18289 }]), tlsSecret('default', 'site-tls', cert, key),
  ingress('default', 'site', { host: HOST, paths: [{ path: '/', service: 'be' }], tls: [{ hosts: [HOST], secretName: 'site-tls' }] })] })) });
await waitFor(async () => (await sendRequest(local.ports.https, HOST, '/', { https: true }).catch(() => null))?.status === 200, { timeoutMs: 60000, what: 'x' });
const master = Number(readFileSync(join(local.workdir, 'nginx.pid'), 'utf8'));
const workers = readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim().split(/\s+/).join(',');
const h = spawn('h2load', ['-c64', '-m10', '-D6s', `--connect-to=127.0.0.1:${local.ports.https}`, `https://${HOST}/`], { stdio: ['ignore', 'pipe', 'ignore'] });
let out = ''; h.stdout.on('data', (d) => { out += d; });
await new Promise((r) => setTimeout(r, 1000));
execFileSync('perf', ['record', '-e', 'cpu-clock', '-g', '-o', process.env.OUT ?? '/tmp/dp/irx.perf', '-p', workers, '--', 'sleep', '4'], { stdio: 'ignore' });
await new Promise((r) => h.on('exit', r)); console.log(out.split('\n').filter((l) => /finished|requests:/.test(l)).join('\n'));
await local.stop(); up.kill();
