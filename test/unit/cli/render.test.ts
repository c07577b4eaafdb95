// `ingress-rx render`: a manifests directory → model.json, backends.json and servers.json, the
// same JSON the model fixtures expect, with warnings on stderr.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runRender } from '../../../src/cli/render.js';
import { silentLogger } from '../../../src/log.js';
import { MODEL_FIXTURES as ROOT } from '../../support/model-fixtures.js';

test('runRender writes model.json, backends.json and servers.json (pretty, trailing newline)', async () => {
  const out = mkdtempSync(join(tmpdir(), 'ingress-rx-render-'));
  const stderr = process.stderr.write.bind(process.stderr);
  const lines: string[] = [];
  process.stderr.write = ((chunk: string) => { lines.push(String(chunk)); return true; }) as typeof process.stderr.write;
  try {
    const code = await runRender({ manifests: join(ROOT, 'missing-service', 'manifests'), out, logger: silentLogger() });
    assert.is(code, 0);
    // The model fixture's expected files, built through the model builder's own API.
    for (const f of ['backends.json', 'servers.json']) assert.fixture(readFileSync(join(out, f), 'utf8'), readFileSync(join(ROOT, 'missing-service', 'expected', f), 'utf8'), f);
    const model = readFileSync(join(out, 'model.json'), 'utf8');
    assert.ok(model.endsWith('}\n') && model.includes('\n  "backends": ['));
    assert.ok(lines.some((l) => l.includes('warning: Ingress default/dangling') && l.includes('Service not found')));
    assert.is(await runRender({ manifests: join(out, 'nope'), out, logger: silentLogger() }), 2);
  } finally {
    process.stderr.write = stderr;
    rmSync(out, { recursive: true, force: true });
  }
});

test.run();
