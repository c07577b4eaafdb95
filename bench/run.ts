// `npm run bench`: runs every bench script in turn (quick by default, `--full` for all sizes),
// each as a child process with a time budget, passes their tables through, and ends with ONE
// JSON line of the figures. A script that fails or runs out of time leaves its figures null.
//   npm run bench [-- --full] [-- --only model,endpoint]
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './gen.js';
import { arg, isFull, loadAverage, machine, printTable, type Figures, type Row } from './lib.js';

export const FIGURE_KEYS = [
  'full_sync_ms_1k', 'full_sync_ms_10k', 'first_sync_ms_10k', 'ingress_change_sync_ms_10k', 'endpoint_change_sync_ms_10k', 'payload_bytes_10k',
  'conf_bytes_per_ingress', 'nginx_t_ms_10k', 'rss_mb_10k', 'rss_mb_10k_listed', 'rss_mb_10k_controller', 'endpoint_p50_ms', 'endpoint_p99_ms', 'endpoint_reloads',
  'dataplane_rps_ratio', 'dataplane_p99_ms', 'dataplane_vs_plain_h2', 'dataplane_vs_plain_h1', 'dataplane_vs_plain_h2_cpu', 'dataplane_vs_plain_h1_cpu',
  'dataplane_vs_plain_same_defaults_h2', 'dataplane_vs_plain_same_defaults_h1', 'dataplane_vs_plain_same_defaults_h2_cpu', 'dataplane_vs_plain_same_defaults_h1_cpu', 'replay_100k_s', 'trace_overhead_ratio', 'cold_start_10k_s', 'machine_check_ms',
  'blast_radius_alone_ms_1k', 'blast_radius_located_ms_1k', 'blast_radius_merge_ms_1k',
  'metrics_rps_ratio', 'metrics_cpu_ratio', 'metrics_controller_cpu_ms_per_s_20k',
  'admission_review_p99_ms_1k', 'admission_review_p99_ms_10k', 'admission_server_ms_per_review_10k', 'admission_review_ms_10k',
  'admission_server_cpu_ms_per_review_10k', 'admission_transport_cpu_ms_per_review_10k', 'admission_first_review_ms_10k',
  'reload_ms_10k', 'rolling_update_failed_requests',
  'changes_under_load_failed_requests', 'changes_under_load_reload_errors', 'changes_under_load_p99_ratio', 'ready_routes_missing',
  'route_add_served_ms_10k', 'route_add_served_p99_ms_10k', 'route_change_served_ms_10k', 'route_reloads_10k', 'dataplane_dynamic_ratio',
  'httproute_add_served_ms_10k', 'httproute_add_served_p99_ms_10k', 'httproute_reloads_10k',
  'route_add_served_controller_ms_10k', 'route_add_served_controller_p99_ms_10k', 'route_change_served_controller_ms_10k', 'route_reloads_controller_10k',
  'modsecurity_crs_nginx_t_ms', 'modsecurity_crs_rss_mb', 'modsecurity_crs_per_location_nginx_t_ms', 'modsecurity_crs_per_location_rss_mb',
  'otel_rps_ratio', 'otel_cpu_ratio',
  'regex_neighbour_p99_ms', 'regex_neighbour_quiet_p99_ms', 'regex_neighbour_ratio',
  'nginx_rss_mb_per_1k_paths_static', 'nginx_rss_mb_per_1k_paths_dynamic', 'nginx_pss_mb_per_1k_paths_static', 'nginx_pss_mb_per_1k_paths_dynamic',
] as const;

/** Targets from the issue: upper bounds unless `atLeast`. */
const TARGETS: Partial<Record<(typeof FIGURE_KEYS)[number], { bound: number; atLeast?: boolean; text: string }>> = {
  full_sync_ms_10k: { bound: 400, text: '≤ 400 ms' },
  first_sync_ms_10k: { bound: 800, text: '≤ 800 ms' },
  ingress_change_sync_ms_10k: { bound: 25, text: '≤ 25 ms' },
  endpoint_change_sync_ms_10k: { bound: 20, text: '≤ 20 ms' },
  conf_bytes_per_ingress: { bound: 4096, text: '≤ 4 KB' },
  rss_mb_10k: { bound: 200, text: '≤ 200 MB' },
  rss_mb_10k_controller: { bound: 200, text: '≤ 200 MB (the controller process, objects as listed)' },
  endpoint_p99_ms: { bound: 250, text: '≤ 250 ms' },
  endpoint_reloads: { bound: 0, text: '0' },
  dataplane_rps_ratio: { bound: 0.9, atLeast: true, text: '≥ 0.9' },
  replay_100k_s: { bound: 5, text: '≤ 5 s' },
  cold_start_10k_s: { bound: 30, text: '≤ 30 s' },
  metrics_rps_ratio: { bound: 0.95, atLeast: true, text: '≥ 0.95' },
  metrics_cpu_ratio: { bound: 0.95, atLeast: true, text: '≥ 0.95' },
  admission_review_p99_ms_10k: { bound: 20, text: '≤ 20 ms' },
  admission_first_review_ms_10k: { bound: 10, text: '≤ 10 ms' },
  admission_server_cpu_ms_per_review_10k: { bound: 0.4, text: '≤ 0.4 ms' },
  rolling_update_failed_requests: { bound: 0, text: '0' },
  changes_under_load_failed_requests: { bound: 0, text: '0' },
  changes_under_load_p99_ratio: { bound: 2, text: '≤ 2 (p99 during changes / quiet)' },
  ready_routes_missing: { bound: 0, text: '0' },
  route_add_served_p99_ms_10k: { bound: 100, text: '≤ 100 ms' },
  route_reloads_10k: { bound: 0, text: '0' },
  route_add_served_controller_p99_ms_10k: { bound: 100, text: '≤ 100 ms' },
  route_reloads_controller_10k: { bound: 0, text: '0' },
  httproute_add_served_p99_ms_10k: { bound: 100, text: '≤ 100 ms (as a new Ingress)' },
  httproute_reloads_10k: { bound: 0, text: '0' },
  dataplane_dynamic_ratio: { bound: 0.95, atLeast: true, text: '≥ 0.95' },
  dataplane_vs_plain_h2: { bound: 0.95, atLeast: true, text: '≥ 0.95' },
  dataplane_vs_plain_h1: { bound: 0.95, atLeast: true, text: '≥ 0.95' },
  dataplane_vs_plain_same_defaults_h2: { bound: 0.95, atLeast: true, text: '≥ 0.95 (plain NGINX with ingress-nginx\'s defaults)' },
  dataplane_vs_plain_same_defaults_h1: { bound: 0.95, atLeast: true, text: '≥ 0.95 (plain NGINX with ingress-nginx\'s defaults)' },
  regex_neighbour_ratio: { bound: 2, text: '≤ 2 (loaded p99 / quiet p99)' },
};

interface Script { name: string; quickBudgetS: number; fullBudgetS: number }

const SCRIPTS: Script[] = [
  { name: 'model', quickBudgetS: 240, fullBudgetS: 1000 },
  { name: 'controller-rss', quickBudgetS: 180, fullBudgetS: 1200 },
  { name: 'endpoint', quickBudgetS: 70, fullBudgetS: 300 },
  { name: 'dataplane', quickBudgetS: 70, fullBudgetS: 250 },
  { name: 'dataplane-plain', quickBudgetS: 170, fullBudgetS: 560 },
  { name: 'replay', quickBudgetS: 90, fullBudgetS: 900 },
  { name: 'coldstart', quickBudgetS: 60, fullBudgetS: 400 },
  { name: 'blastradius', quickBudgetS: 120, fullBudgetS: 240 },
  { name: 'metrics', quickBudgetS: 60, fullBudgetS: 240 },
  { name: 'admission', quickBudgetS: 40, fullBudgetS: 120 },
  { name: 'reload', quickBudgetS: 60, fullBudgetS: 240 },
  { name: 'routes', quickBudgetS: 150, fullBudgetS: 600 },
  { name: 'rolling', quickBudgetS: 60, fullBudgetS: 60 },
  { name: 'changes-under-load', quickBudgetS: 120, fullBudgetS: 900 },
  { name: 'modsecurity', quickBudgetS: 60, fullBudgetS: 240 },
  { name: 'opentelemetry', quickBudgetS: 60, fullBudgetS: 150 },
  { name: 'regex-neighbour', quickBudgetS: 60, fullBudgetS: 120 },
  { name: 'nginx-memory', quickBudgetS: 180, fullBudgetS: 300 },
];

/** Runs one script, echoing its output; resolves with its last JSON line or an error. */
function runScript(name: string, full: boolean, budgetS: number): Promise<{ figures: Figures | null; error: string | null; seconds: number }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bench', `${name}.ts`), ...(full ? ['--full'] : [])], {
      cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    let out = '';
    let err = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => { out += d; process.stdout.write(d); });
    child.stderr.on('data', (d: Buffer) => { err += d; process.stderr.write(d); });
    // The script's own children (NGINX, local mode) share its process group.
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid!, 'SIGTERM'); } catch { /* gone */ }
      setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, 5000).unref();
    }, budgetS * 1000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const seconds = (performance.now() - t0) / 1000;
      const last = out.trim().split('\n').pop() ?? '';
      let figures: Figures | null = null;
      try { figures = last.startsWith('{') ? JSON.parse(last) as Figures : null; } catch { figures = null; }
      const error = timedOut ? `stopped after its ${budgetS} s budget`
        : figures === null ? `exited ${code} without figures: ${err.trim().split('\n').pop() ?? ''}` : null;
      resolve({ figures, error, seconds });
    });
  });
}

async function main(): Promise<void> {
  const full = isFull();
  const only = arg('--only')?.split(',');
  const totalBudgetS = full ? 3600 : 460;
  const t0 = performance.now();
  const m = machine();
  process.stdout.write(`ingress-rx bench (${full ? 'full' : 'quick'}) ${new Date().toISOString()}: nproc ${m.nproc}, ${m.memory}, node ${m.node}, ${m.nginx}, ${m.wrk}; load ${loadAverage()}\n`);
  const merged: Figures = {};
  const rows: Row[] = [];
  for (const s of SCRIPTS) {
    if (only && !only.includes(s.name)) continue;
    const left = totalBudgetS - (performance.now() - t0) / 1000;
    const budget = Math.min(full ? s.fullBudgetS : s.quickBudgetS, left);
    if (budget < 10) { rows.push({ figure: s.name, value: '-', status: 'SKIPPED', note: 'the run ran out of its time budget' }); continue; }
    const r = await runScript(s.name, full, budget);
    if (r.figures) Object.assign(merged, r.figures);
    rows.push({ figure: `script ${s.name}`, value: `${r.seconds.toFixed(0)} s`, status: r.error ? 'ERROR' : 'ok', note: r.error ?? '' });
  }
  const final: Record<string, number | string | null> = {};
  for (const k of FIGURE_KEYS) {
    const v = merged[k];
    final[k] = v === undefined ? null : v;
    const t = TARGETS[k];
    const value = final[k];
    const status = t === undefined || value === null ? (value === null ? 'n/a' : '')
      : (t.atLeast ? Number(value) >= t.bound : Number(value) <= t.bound) ? 'met' : 'MISSED';
    rows.push({ figure: k, value: value === null ? 'null' : String(value), target: t?.text ?? '', status });
  }
  if (merged.reload_ms_2k !== undefined) rows.push({ figure: 'reload_ms_2k (not in JSON)', value: String(merged.reload_ms_2k) });
  if (merged.cold_start_1k_s !== undefined) rows.push({ figure: 'cold_start_1k_s (not in JSON)', value: String(merged.cold_start_1k_s) });
  if (merged.replay_events !== undefined) rows.push({ figure: 'replay events measured (not in JSON)', value: String(merged.replay_events), note: Number(merged.replay_events) < 100_000 ? 'replay_100k_s is extrapolated' : '' });
  if (merged.dataplane_cpu_ratio !== undefined) rows.push({ figure: 'static / Lua NGINX CPU per request (not in JSON)', value: String(merged.dataplane_cpu_ratio), note: 'robust to other load; compare with dataplane_rps_ratio' });
  if (merged.route_add_controller_cpu_ms_10k !== undefined) rows.push({ figure: 'CPU per new dynamic Ingress at 10k, controller / NGINX (not in JSON)', value: `${merged.route_add_controller_cpu_ms_10k} / ${merged.route_add_nginx_cpu_ms_10k} ms`, note: 'robust to other load; compare with route_add_served_ms_10k' });
  if (merged.dataplane_dynamic_cpu_ratio !== undefined) rows.push({ figure: 'server block / dynamic host NGINX CPU per request (not in JSON)', value: String(merged.dataplane_dynamic_cpu_ratio), note: 'robust to other load; compare with dataplane_dynamic_ratio' });
  if (merged.dataplane_dynamic_metrics_ratio !== undefined) rows.push({ figure: 'dataplane_dynamic_ratio with the metrics log on (not in JSON)', value: String(merged.dataplane_dynamic_metrics_ratio), target: '≥ 0.95', note: `NGINX CPU ratio ${merged.dataplane_dynamic_metrics_cpu_ratio}; --enable-metrics is the controller's default` });
  if (merged.endpoint_rate_limit !== undefined) rows.push({ figure: 'endpoint figures at --sync-rate-limit (not in JSON)', value: String(merged.endpoint_rate_limit) });
  rows.push({ figure: 'total', value: `${((performance.now() - t0) / 1000).toFixed(0)} s`, note: `load average at the end ${loadAverage()}` });
  printTable(`summary (${full ? 'full' : 'quick'})`, rows);
  process.stdout.write(`${JSON.stringify(final)}\n`);
}

await main();
