// `ingress-rx wait-shutdown`: the image's /wait-shutdown, the preStop hook of ingress-nginx's
// manifests. As ingress-nginx's: sends SIGTERM to the controller running in this container,
// then returns once no NGINX process is left (the controller has drained and stopped it). The
// kubelet's own SIGTERM follows; the controller, already shutting down, goes on.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessInfo { pid: number; argv: string[]; comm: string }

/** The processes this user can see, from /proc. */
export function listProcesses(proc = '/proc'): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const entry of readdirSync(proc)) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`${proc}/${entry}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
      const comm = readFileSync(`${proc}/${entry}/comm`, 'utf8').trim();
      out.push({ pid: Number(entry), argv, comm });
    } catch { /* gone meanwhile */ }
  }
  return out;
}

/** `node …/ingress-rx controller …`: what /nginx-ingress-controller runs. */
export function isController(p: ProcessInfo): boolean {
  const script = p.argv.findIndex((a) => /(^|\/)ingress-rx$|(^|\/)dist\/cli\/main\.js$/.test(a));
  return script > 0 && p.argv[script + 1] === 'controller';
}

export async function runWaitShutdown(opts: { pollMs?: number; proc?: string } = {}): Promise<number> {
  const proc = opts.proc ?? '/proc';
  const controllers = listProcesses(proc).filter((p) => p.pid !== process.pid && isController(p));
  if (controllers.length === 0) {
    process.stderr.write('wait-shutdown: no ingress-rx controller process found\n');
    return 1;
  }
  for (const c of controllers) {
    try {
      process.kill(c.pid, 'SIGTERM');
    } catch (err) {
      process.stderr.write(`wait-shutdown: cannot signal process ${c.pid}: ${String(err)}\n`);
      return 1;
    }
  }
  process.stdout.write(`wait-shutdown: sent SIGTERM to the controller (${controllers.map((c) => c.pid).join(', ')}); waiting for NGINX to stop\n`);
  while (listProcesses(proc).some((p) => p.comm === 'nginx')) {
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 500));
  }
  process.stdout.write('wait-shutdown: NGINX has stopped\n');
  return 0;
}
