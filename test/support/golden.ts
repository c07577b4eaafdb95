// Golden files: compare a text with the file, or (UPDATE_GOLDEN=1) write it.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as assert from 'uvu/assert';

export const UPDATE_GOLDEN = process.env.UPDATE_GOLDEN === '1';

export function expectGolden(file: string, text: string, name = file): void {
  if (UPDATE_GOLDEN) {
    writeFileSync(file, text);
    return;
  }
  assert.ok(existsSync(file), `${name} is missing (run with UPDATE_GOLDEN=1)`);
  assert.fixture(text, readFileSync(file, 'utf8'), name);
}
