// How tests start the CLI: the compiled one (bin/ingress-rx, dist/) when the build is newer than
// every source file, as scripts/setup.sh leaves it; from source through tsx otherwise. The
// compiled CLI starts in less than half the CPU time, and CI starts it hundreds of times.
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let cached: string[] | undefined;

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** The arguments to give `node` before the CLI's own. */
export function cliArgs(): string[] {
  if (cached) return cached;
  let built = 0;
  try { built = statSync(join(ROOT, 'dist', '.build-stamp')).mtimeMs; } catch { /* not built */ }
  cached = built > newestSource(join(ROOT, 'src'))
    ? [join(ROOT, 'bin', 'ingress-rx')]
    : ['--import', 'tsx', join(ROOT, 'test', 'support', 'cli-entry.ts')];
  return cached;
}
