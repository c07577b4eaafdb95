// `ingress-rx trace summary FILE`: prints the summary table of a trace written by --trace.
import { readFileSync } from 'node:fs';
import { formatTraceSummary, parseTrace, summariseTrace } from '../observability/trace-summary.js';

export async function runTraceSummary(file: string): Promise<number> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    process.stderr.write(`ingress-rx trace summary: cannot read ${file}: ${(err as Error).message}\n`);
    return 2;
  }
  try {
    process.stdout.write(formatTraceSummary(summariseTrace(parseTrace(text))));
    return 0;
  } catch (err) {
    process.stderr.write(`ingress-rx trace summary: ${file}: ${(err as Error).message}\n`);
    return 2;
  }
}
