// `ingress-rx dbg`: inspects a running NGINX through its control server (the unix socket and
// token in the controller's workdir), as ingress-nginx's /dbg does, with the same messages.
// `conf` reads the running nginx.conf from the control server; `quarantine` reads the
// controller's report in the workdir.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { controlChannel } from '../render/control.js';
import { defaultRuntime } from '../render/runtime.js';
import { controlRequest } from '../actors/control-client.js';
import { ROUTES_REPORT_FILE } from './routes-report.js';
import { TAKEOVERS_REPORT_FILE } from './takeovers-report.js';

/** Written by the controller into its workdir whenever the quarantine changes. */
export const QUARANTINE_FILE = 'quarantine.json';

/** The controller's --workdir when none is given (the controller's own default). */
export const DEFAULT_DBG_WORKDIR = '/tmp/ingress-rx';

interface DbgOptions { workdir?: string; host?: string }

/** The block of one server between its `## start server` / `## end server` markers. */
export function serverBlock(conf: string, host: string): string | null {
  const start = conf.indexOf(`## start server ${host}\n`);
  if (start < 0) return null;
  const endMarker = `## end server ${host}`;
  const end = conf.indexOf(endMarker, start);
  if (end < 0) return null;
  const lineStart = conf.lastIndexOf('\n', start) + 1;
  return conf.slice(lineStart, end + endMarker.length);
}

export async function runDbg(args: string[], opts: DbgOptions, out: (s: string) => void = (s) => process.stdout.write(s)): Promise<number> {
  const control = controlChannel(defaultRuntime({ prefix: opts.workdir ?? DEFAULT_DBG_WORKDIR }));
  const get = (path: string) => controlRequest(control, 'GET', path, { timeoutMs: 5000 });
  try {
    const [what, sub, name] = args;
    if (what === 'backends') {
      const res = await get('/configuration/backends');
      if (res.status !== 200) { out(`Nginx returned code ${res.status}\n`); return 1; }
      const backends = JSON.parse(res.body) as Array<{ name: string }>;
      if (sub === 'list') { out(backends.map((b) => `${b.name}\n`).join('')); return 0; }
      if (sub === 'all') { out(`${JSON.stringify(backends, null, 2)}\n`); return 0; }
      const one = backends.find((b) => b.name === name);
      if (!one) { out('A backend of this name was not found.\n'); return 1; }
      out(`${JSON.stringify(one, null, 2)}\n`);
      return 0;
    }
    if (what === 'certs') {
      const host = name;
      const res = await get(`/configuration/certs?hostname=${encodeURIComponent(host)}`);
      if (res.status === 200) { out(res.body); return 0; }
      if (res.status !== 404) { out(`Nginx returned code ${res.status}\n${res.body}\n`); return 1; }
      out(`No cert found for host ${host}\n`);
      return 1;
    }
    if (what === 'general') {
      const res = await get('/configuration/general');
      // No general document posted: `{}`, what ingress-nginx's dbg prints (it posts none either).
      if (res.status === 404) { out('{}\n'); return 0; }
      if (res.status !== 200) { out(`Nginx returned code ${res.status}\n`); return 1; }
      out(`${JSON.stringify(JSON.parse(res.body || '{}'), null, 2)}\n`);
      return 0;
    }
    if (what === 'ingresses') {
      const res = await get('/ingresses-left-out');
      if (res.status === 404) { out('The controller has not reported yet.\n'); return 1; }
      if (res.status !== 200) { out(`Nginx returned code ${res.status}\n`); return 1; }
      const list = JSON.parse(res.body) as Array<{ ingress: string; reason: string }>;
      if (list.length === 0) { out('Every Ingress is served.\n'); return 0; }
      out(list.map((l) => `${l.ingress}: not served: ${l.reason}\n`).join(''));
      return 0;
    }
    if (what === 'quarantine') {
      const file = join(opts.workdir ?? DEFAULT_DBG_WORKDIR, QUARANTINE_FILE);
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        out(`No quarantine report at ${file} (is --workdir the controller's?)\n`);
        return 1;
      }
      const { quarantined } = JSON.parse(text) as { quarantined: Array<{ kind: string; key: string; reason: string; since: number }> };
      if (quarantined.length === 0) { out('Nothing is quarantined.\n'); return 0; }
      for (const e of quarantined) out(`${e.kind} ${e.key} (since ${new Date(e.since).toISOString()}): ${e.reason}\n`);
      return 0;
    }
    // The controller's reports in its workdir: which hosts the Lua router serves and why the
    // others keep a server block; which Ingress takes another namespace's traffic, and whose.
    const report = (name: string, file: string) => {
      const path = join(opts.workdir ?? DEFAULT_DBG_WORKDIR, file);
      try {
        out(readFileSync(path, 'utf8'));
        return 0;
      } catch {
        out(`No ${name} report at ${path} (is --workdir the controller's?)\n`);
        return 1;
      }
    };
    if (what === 'routes') return report('dynamic-routes', ROUTES_REPORT_FILE);
    if (what === 'takeovers') return report('takeovers', TAKEOVERS_REPORT_FILE);
    if (what === 'conf') {
      const res = await get('/nginx.conf');
      if (res.status !== 200) { out(`Nginx returned code ${res.status}\n`); return 1; }
      if (!opts.host) { out(res.body); return 0; }
      const block = serverBlock(res.body, opts.host);
      if (!block) {
        // A dynamic host has no server block: its routes are the router's table.
        const routes = await get('/configuration/routes');
        const hosts = routes.status === 200 ? (JSON.parse(routes.body) as { hosts: Record<string, unknown> }).hosts : {};
        const own = hosts[opts.host.toLowerCase()];
        if (own === undefined) { out(`No server found for host ${opts.host}\n`); return 1; }
        out(`# ${opts.host} is a dynamic host, served by the Lua router (dbg routes); its routes:\n${JSON.stringify(own, null, 2)}\n`);
        return 0;
      }
      out(`${block}\n`);
      return 0;
    }
    out(`unknown dbg command: ${args.join(' ')}\n`);
    return 2;
  } catch (err) {
    out(`${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
