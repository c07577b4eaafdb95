// Every file under a directory, as sorted paths relative to it (comparing output trees).
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(root, p));
    }
  };
  walk(root);
  return out;
}
