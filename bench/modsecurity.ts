// ModSecurity's Core Rule Set per Ingress (enable-owasp-core-rules): what NGINX's check of the
// configuration costs, as ingress-rx renders it (the rule set parsed once at http level, each
// location opting in) and as ingress-nginx does (the rule set parsed in every location). The
// same rendered nginx.conf is checked twice, the second time rewritten to ingress-nginx's layout;
// `nginx -t` runs under /usr/bin/time for its wall time and peak memory.
//   node --import tsx bench/modsecurity.ts [--full] [--n N]
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createStore, defaultStoreOptions } from '../src/store/store.js';
import { createModelBuilder } from '../src/model/build.js';
import { ANNOTATION_REFERENCES } from '../src/model/ingress/annotations/index.js';
import { auxiliaryFiles, createRenderer } from '../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR, defaultRuntime, preparePrefix } from '../src/render/runtime.js';
import { ensureFallbackCertificate } from '../src/render/fallback-cert.js';
import { modsecurityPaths } from '../src/render/blocks/modsecurity.js';
import { silentLogger } from '../src/log.js';
import type { Ingress } from '../src/store/kube-types.js';
import { generateEvents } from './gen.js';
import { arg, attempt, emitFigures, isFull, loadAverage, printTable, round, type Row } from './lib.js';

const A = 'nginx.ingress.kubernetes.io';

/** `nginx -t` of `conf`: wall seconds and peak resident memory (MB). */
function check(prefix: string, conf: string): Promise<{ s: number; mb: number }> {
  const out = join(prefix, 'time.txt');
  return new Promise((resolve, reject) => {
    execFile('/usr/bin/time', ['-o', out, '-f', '%e %M', 'nginx', '-t', '-q', '-p', `${prefix}/`, '-c', conf], { timeout: 600_000 }, (err, _o, se) => {
      if (err) return reject(new Error(`nginx -t failed: ${String(se).trim().split('\n').slice(-3).join(' ')}`));
      const [s, kb] = readFileSync(out, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
      resolve({ s: s!, mb: kb! / 1024 });
    });
  });
}

async function measure(n: number): Promise<{ locations: number; ours: { s: number; mb: number }; theirs: { s: number; mb: number } }> {
  const prefix = mkdtempSync(join(tmpdir(), 'irx-bench-modsec-'));
  try {
    const runtime = defaultRuntime({ prefix, listenAddresses: ['127.0.0.1'], resolvers: ['127.0.0.1'], workerProcesses: '1' });
    preparePrefix(runtime);
    runtime.fallbackCert = await ensureFallbackCertificate(join(prefix, 'ssl'));
    const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, silentLogger());
    for (const e of generateEvents({ n, plain: true, tlsFraction: 0 })) {
      if (e.kind === 'Ingress') {
        const ing = e.object as Ingress;
        ing.metadata.annotations = { ...ing.metadata.annotations, [`${A}/enable-modsecurity`]: 'true', [`${A}/enable-owasp-core-rules`]: 'true' };
      }
      store.apply(e);
    }
    const { config } = createModelBuilder({ annotationsPrefix: A, defaultServerPort: 8181, logger: silentLogger() }).build(store);
    for (const f of auxiliaryFiles(config, runtime)) {
      mkdirSync(dirname(f.path), { recursive: true });
      writeFileSync(f.path, f.content);
    }
    const ours = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() }).render(config, runtime);
    const crs = modsecurityPaths(runtime).crs;
    const optIn = /^(\s*)modsecurity_rules 'SecAction "id:1990000,[^\n]*';$/gm;
    const locations = ours.match(optIn)?.length ?? 0;
    if (locations === 0) throw new Error('no location opts in to the Core Rule Set');
    // ingress-nginx's layout: the rule set in every location, none at http level.
    const theirs = ours
      .replace(/    # The Core Rule Set for the locations[^\n]*\n    modsecurity_rules '[^']*';\n    modsecurity_rules_file [^\n]*\n    modsecurity_rules 'SecMarker [^']*';\n/, '')
      .replace(optIn, `$1modsecurity_rules_file "${crs}";`);
    writeFileSync(join(prefix, 'ours.conf'), ours);
    writeFileSync(join(prefix, 'theirs.conf'), theirs);
    return { locations, ours: await check(prefix, join(prefix, 'ours.conf')), theirs: await check(prefix, join(prefix, 'theirs.conf')) };
  } finally {
    rmSync(prefix, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const n = Number(arg('--n') ?? (isFull() ? 100 : 20));
  const rows: Row[] = [];
  const fig: Record<string, number | null> = { modsecurity_crs_nginx_t_ms: null, modsecurity_crs_rss_mb: null, modsecurity_crs_per_location_nginx_t_ms: null, modsecurity_crs_per_location_rss_mb: null };
  await attempt(rows, `Core Rule Set in ${n} Ingresses`, async () => {
    const m = await measure(n);
    fig.modsecurity_crs_nginx_t_ms = round(m.ours.s * 1000, 0);
    fig.modsecurity_crs_rss_mb = round(m.ours.mb, 0);
    fig.modsecurity_crs_per_location_nginx_t_ms = round(m.theirs.s * 1000, 0);
    fig.modsecurity_crs_per_location_rss_mb = round(m.theirs.mb, 0);
    rows.push({ figure: `nginx -t, ${n} Ingresses with enable-owasp-core-rules (${m.locations} locations): parsed once`, value: `${(m.ours.s * 1000).toFixed(0)} ms, ${m.ours.mb.toFixed(0)} MB` });
    rows.push({ figure: '… the same configuration, the rule set in every location (ingress-nginx)', value: `${(m.theirs.s * 1000).toFixed(0)} ms, ${m.theirs.mb.toFixed(0)} MB` });
  });
  rows.push({ figure: 'load average (1/5/15 min) at the end', value: loadAverage() });
  printTable('modsecurity', rows);
  emitFigures(fig);
}

await main();
