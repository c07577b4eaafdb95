// The package's version and where the repository lives, read once from package.json.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** The repository root (works from src/ under tsx and from dist/ after a build). */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

let cached: string | undefined;

export function version(): string {
  cached ??= (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  return cached;
}
