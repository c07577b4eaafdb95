// `ingress-rx migrate-report`: what moving from ingress-nginx changes, per Ingress annotation and
// ConfigMap key, over a cluster dump. Exit status 0, or 2 for unreadable input.
import type { Writable } from 'node:stream';
import { migrationReport } from '../admission/migrate.js';
import { formatReport, type ReportFormat } from '../admission/migrate-format.js';
import { readInputs } from './manifest-inputs.js';
import { storeOptionsOf, type ClusterFlags } from './cluster-flags.js';

export interface MigrateCommandOptions extends ClusterFlags {
  output?: ReportFormat;
  now?: () => Date;
  stdin?: () => string;
}

export function runMigrateReport(paths: string[], opts: MigrateCommandOptions, out: Writable = process.stdout, err: Writable = process.stderr): number {
  const inputs = readInputs(paths, opts.stdin);
  for (const e of inputs.errors) err.write(`migrate-report: ${e}\n`);
  if (inputs.errors.length > 0 || inputs.files.length === 0) return 2;
  const report = migrationReport(inputs.files, {
    store: storeOptionsOf(opts), configmap: opts.configmap, annotationsPrefix: opts.annotationsPrefix, now: opts.now,
  });
  out.write(formatReport(report, opts.output ?? 'text'));
  return 0;
}
