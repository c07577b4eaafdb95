// `ingress-rx lint`: the admission webhook's checks over manifests, for CI and pre-commit hooks.
// Exit status 0: no errors (warnings allowed unless --strict); 1: errors; 2: unreadable input.
import type { Writable } from 'node:stream';
import { formatFinding, lintManifests } from '../admission/lint.js';
import { readInputs } from './manifest-inputs.js';
import { budgetsOf, storeOptionsOf, type ClusterFlags } from './cluster-flags.js';

export interface LintCommandOptions extends ClusterFlags {
  strict?: boolean;
  hostOwnership?: boolean;
  output?: 'text' | 'json';
  /** Clock for certificate expiry (tests). */
  now?: () => Date;
  stdin?: () => string;
}

export function runLint(paths: string[], opts: LintCommandOptions, out: Writable = process.stdout, err: Writable = process.stderr): number {
  const inputs = readInputs(paths, opts.stdin);
  for (const e of inputs.errors) err.write(`lint: ${e}\n`);
  if (inputs.errors.length > 0 || inputs.files.length === 0) return 2;
  const r = lintManifests(inputs.files, { store: storeOptionsOf(opts), annotationsPrefix: opts.annotationsPrefix, now: opts.now, budgets: budgetsOf(opts), hostOwnership: opts.hostOwnership });
  const errors = r.findings.filter((f) => f.severity === 'deny').length;
  const warnings = r.findings.length - errors;
  if (opts.output === 'json') {
    out.write(`${JSON.stringify({ findings: r.findings, errors, warnings, files: r.files, objects: r.objects, served: r.served, skipped: r.skipped, assumed: r.assumed }, null, 2)}\n`);
  } else {
    if (r.assumed) out.write(`note: ${r.assumed}\n`);
    for (const f of r.findings) out.write(`${formatFinding(f)}\n`);
    const skipped = r.skipped.length ? `; ${r.skipped.length} Ingress${r.skipped.length === 1 ? '' : 'es'} of another class skipped` : '';
    out.write(`${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'} in ${r.served.length} Ingress${r.served.length === 1 ? '' : 'es'} (${r.objects} objects, ${r.files} file${r.files === 1 ? '' : 's'})${skipped}\n`);
  }
  return errors > 0 || (opts.strict && warnings > 0) ? 1 : 0;
}
