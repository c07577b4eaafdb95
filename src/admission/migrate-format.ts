// The migration report as text (a terminal), Markdown (a wiki page or a pull request) or JSON.
import { DIFFERENCES_DOC, anchorOf, type KeyStatus } from './catalogue.js';
import type { IngressOutcome, KeyReport, MigrationReport } from './migrate.js';

export type ReportFormat = 'text' | 'markdown' | 'json';

const OUTCOME: Record<IngressOutcome, string> = {
  'as-is': 'moves as it is', differences: 'moves, with documented differences', changes: 'needs changes',
};
const STATUS_ORDER: readonly KeyStatus[] = ['identical', 'different', 'refused', 'unknown'];

/** Values are shown, but never whole: a report is read, and values may be long or multi-line. */
function shortValue(v: string, max = 48): string {
  const one = JSON.stringify(v);
  return one.length > max ? `${one.slice(0, max - 2)}…"` : one;
}

function link(section: string | undefined): string {
  return section ? `${DIFFERENCES_DOC}#${anchorOf(section)}` : '';
}

function explain(r: { status: KeyStatus; note?: string; section?: string }): string {
  if (r.status === 'identical') return '';
  return [r.note ?? '', r.section ? `(${link(r.section)})` : ''].filter((x) => x).join(' ');
}

function summaryLines(r: MigrationReport): string[] {
  const s = r.summary;
  const counts = (c: Record<KeyStatus, number>) => STATUS_ORDER.map((k) => `${k} ${c[k]}`).join(', ');
  return [
    `Ingresses: ${s.ingresses.total} — ${s.ingresses['as-is']} move as they are, ${s.ingresses.differences} move with documented differences, ${s.ingresses.changes} need changes`
      + (r.skipped.length ? ` (${r.skipped.length} of another class or namespace skipped)` : ''),
    `Annotation keys: ${counts(s.annotationKeys)} (uses: ${counts(s.annotationUses)})`,
    `ConfigMap keys: ${r.configMap ? counts(s.configMapKeys) : 'no --configmap given'}`,
    `Values ingress-rx refuses: ${s.refusedValues}`,
    `As HTTPRoutes (Gateway API): ${s.httpRouteLossless} of ${s.ingresses.total} Ingresses with no loss`,
    ...(r.assumed ? [`Note: ${r.assumed}`] : []),
  ];
}

function text(r: MigrationReport): string {
  const out: string[] = ['ingress-rx migrate-report', '', 'Summary', ...summaryLines(r).map((l) => `  ${l}`)];
  const keyLine = (k: KeyReport) => {
    const head = `    ${k.key} = ${shortValue(k.value)}`;
    const lines = [`${head.padEnd(60)} ${k.status}${explain(k) ? ` — ${explain(k)}` : ''}`];
    for (const p of k.problems) lines.push(`      ${p.severity === 'deny' ? 'refused' : 'note'}: ${p.message}`);
    return lines;
  };
  if (r.configMap) {
    out.push('', `ConfigMap ${r.configMap.key}${r.configMap.found ? '' : ' — not found in the files'}`);
    for (const e of r.configMap.entries) out.push(...keyLine(e));
  }
  for (const i of r.ingresses) {
    out.push('', `Ingress ${i.key}${i.file ? ` (${i.file}:${i.line})` : ''} — ${OUTCOME[i.outcome]}`);
    for (const a of i.annotations) out.push(...keyLine(a));
    for (const p of i.problems) out.push(`    ${p.severity === 'deny' ? 'refused' : 'note'}: ${p.field}: ${p.message}`);
    out.push(`    as an HTTPRoute: ${i.httpRoute.lossless ? 'no loss' : 'loses what has no full equivalent'}`);
    for (const g of i.httpRoute.gaps) out.push(`      ${g.key}: ${g.fit === 'none' ? 'none' : 'partly'} — ${g.equivalent}`);
  }
  if (r.annotationKeys.length) {
    out.push('', 'Annotations in use');
    for (const a of r.annotationKeys) out.push(`  ${a.key.padEnd(40)} ${a.status.padEnd(9)} ${String(a.uses).padStart(4)}  ${explain(a)}`.trimEnd());
  }
  if (r.skipped.length) {
    out.push('', 'Skipped (not this controller\'s)');
    for (const s of r.skipped) out.push(`  ${s.key}: ${s.reason}`);
  }
  return `${out.join('\n')}\n`;
}

/** Text in a table cell: Markdown and HTML in a tenant's value or a message stay text. */
const cell = (s: string) => s.replace(/[\\`*_[\]<>|#!~]/g, (c) => `\\${c}`).replace(/\n/g, ' ');

/** A code span that holds any value (a longer fence than any run of backticks in it). */
function code(s: string): string {
  const run = Math.max(0, ...(s.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(run + 1);
  const body = s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return run > 0 ? `${fence} ${body} ${fence}` : `${fence}${body}${fence}`;
}

function markdown(r: MigrationReport): string {
  const out: string[] = ['# Moving to ingress-rx: migration report', '', '## Summary', '', ...summaryLines(r).map((l) => `- ${l}`)];
  const mdExplain = (k: { status: KeyStatus; note?: string; section?: string }) =>
    k.status === 'identical' ? '' : `${cell(k.note ?? '')}${k.section ? ` ([${k.section}](${link(k.section)}))` : ''}`;
  const table = (rows: KeyReport[]) => [
    '| Key | Value | Status | What changes |', '|---|---|---|---|',
    ...rows.map((k) => `| ${code(k.key)} | ${code(shortValue(k.value))} | ${k.status} | ${[mdExplain(k), ...k.problems.map((p) => `${p.severity === 'deny' ? '**refused**' : 'note'}: ${cell(p.message)}`)].filter((x) => x).join('<br>')} |`),
  ];
  if (r.configMap) {
    out.push('', `## ConfigMap ${r.configMap.key}`, '');
    if (!r.configMap.found) out.push('Not found in the files.');
    else out.push(...table(r.configMap.entries));
  }
  out.push('', '## Ingresses', '', '| Ingress | Outcome | Keys to look at | As an HTTPRoute |', '|---|---|---|---|');
  for (const i of r.ingresses) {
    const keys = i.annotations.filter((a) => a.status !== 'identical' || a.problems.length).map((a) => code(a.key));
    const route = i.httpRoute.lossless ? 'no loss' : `loses: ${i.httpRoute.gaps.map((g) => code(g.key)).join(', ')}`;
    out.push(`| ${i.key} | ${OUTCOME[i.outcome]} | ${[...keys, ...i.problems.map((p) => code(p.field))].join(', ')} | ${route} |`);
  }
  const lossy = r.ingresses.filter((i) => !i.httpRoute.lossless);
  if (lossy.length) {
    out.push('', '## As HTTPRoutes: what has no full Gateway API equivalent', '', '| Ingress | Annotation or field | Equivalent |', '|---|---|---|');
    for (const i of lossy) for (const g of i.httpRoute.gaps) out.push(`| ${i.key} | ${code(g.key)} | ${g.fit === 'none' ? '**none**: ' : 'partly: '}${cell(g.equivalent)} |`);
  }
  for (const i of r.ingresses.filter((x) => x.outcome !== 'as-is')) {
    out.push('', `### Ingress ${i.key}`, '', `${i.file ? `${code(`${i.file}:${i.line}`)} — ` : ''}${OUTCOME[i.outcome]}`, '');
    if (i.annotations.length) out.push(...table(i.annotations));
    for (const p of i.problems) out.push(`- ${p.severity === 'deny' ? '**refused**' : 'note'}: ${code(p.field)}: ${cell(p.message)}`);
  }
  if (r.annotationKeys.length) {
    out.push('', '## Annotations in use', '', '| Annotation | Status | Ingresses | What changes |', '|---|---|---|---|');
    for (const a of r.annotationKeys) out.push(`| ${code(a.key)} | ${a.status} | ${a.uses} | ${mdExplain(a)} |`);
  }
  if (r.skipped.length) {
    out.push('', '## Skipped', '', ...r.skipped.map((s) => `- ${s.key}: ${cell(s.reason)}`));
  }
  return `${out.join('\n')}\n`;
}

export function formatReport(r: MigrationReport, format: ReportFormat): string {
  if (format === 'json') return `${JSON.stringify(r, null, 2)}\n`;
  return format === 'markdown' ? markdown(r) : text(r);
}
