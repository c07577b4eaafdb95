// The inputs of `lint` and `migrate-report`: files, directories (read as the manifests source reads
// them) and `-` for standard input (a `kubectl get … -o yaml` piped in).
import { readFileSync, statSync } from 'node:fs';
import { listManifestFiles } from '../streams/manifests.js';
import { isManifestFile } from '../streams/manifests-parse.js';
import type { ManifestText } from '../admission/lint.js';

export const STDIN_NAME = '<stdin>';

/** The files behind the given paths; what cannot be read is an error line. */
export function readInputs(paths: readonly string[], stdin: () => string = () => readFileSync(0, 'utf8')): { files: ManifestText[]; errors: string[] } {
  const files: ManifestText[] = [];
  const errors: string[] = [];
  const read = (file: string) => {
    try {
      files.push({ file, text: readFileSync(file, 'utf8') });
    } catch (err) {
      errors.push(`${file}: ${(err as Error).message}`);
    }
  };
  for (const p of paths) {
    if (p === '-') {
      files.push({ file: STDIN_NAME, text: stdin() });
      continue;
    }
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) errors.push(`${p}: no such file or directory`);
    else if (st.isDirectory()) {
      const listed = listManifestFiles(p);
      for (const e of listed.errors) errors.push(`${e.file}: ${e.reason}`);
      if (listed.files.length === 0) errors.push(`${p}: no .yaml, .yml or .json files`);
      for (const f of listed.files) read(f);
    } else {
      if (!isManifestFile(p.split('/').pop() ?? p)) errors.push(`${p}: not a .yaml, .yml or .json file`);
      else read(p);
    }
  }
  return { files, errors };
}
