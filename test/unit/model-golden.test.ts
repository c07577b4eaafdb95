// Golden fixtures: each test/fixtures/model/<case>/manifests is rendered offline and compared
// with <case>/expected/{model,backends,servers,warnings}.json. UPDATE_GOLDEN=1 rewrites them.
// model.json leaves out `settings` (the ConfigMap parser's own tests cover them).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderModel, runRender, type RenderModelOptions } from '../../src/cli/render.js';
import { silentLogger } from '../../src/log.js';
import { stableJSON } from '../../src/model/json.js';
import { backendsPayload, serversPayload } from '../../src/model/payload.js';

const ROOT = new URL('../fixtures/model/', import.meta.url).pathname;
const NOW = new Date('2026-11-22T00:00:00Z');
const update = process.env.UPDATE_GOLDEN === '1';

interface CaseOptions extends RenderModelOptions { reservedPorts?: number[] }

export function renderCase(name: string): Record<string, string> {
  const optsFile = join(ROOT, name, 'options.json');
  const opts: CaseOptions = existsSync(optsFile) ? JSON.parse(readFileSync(optsFile, 'utf8')) : {};
  const r = renderModel(join(ROOT, name, 'manifests'), { ...opts, now: () => NOW, defaultServerPort: 8181 });
  assert.equal(r.manifestErrors, [], `${name}: manifest errors`);
  const { settings: _settings, ...model } = r.config;
  return {
    'model.json': stableJSON(model),
    'backends.json': stableJSON(backendsPayload(r.config)),
    'servers.json': stableJSON(serversPayload(r.config)),
    'warnings.json': stableJSON(r.warnings),
  };
}

const cases = readdirSync(ROOT).filter((d) => !d.startsWith('_') && existsSync(join(ROOT, d, 'manifests'))).sort();

test('there are golden cases', () => {
  assert.ok(cases.length >= 20, `only ${cases.length} cases`);
});

for (const name of cases) {
  test(`golden: ${name}`, () => {
    const files = renderCase(name);
    const dir = join(ROOT, name, 'expected');
    if (update) {
      mkdirSync(dir, { recursive: true });
      for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
      return;
    }
    for (const [f, text] of Object.entries(files)) {
      const file = join(dir, f);
      assert.ok(existsSync(file), `${name}/expected/${f} is missing (run with UPDATE_GOLDEN=1)`);
      assert.fixture(text, readFileSync(file, 'utf8'), `${name}/expected/${f}`);
    }
  });
}

test('rendering twice gives identical bytes', () => {
  assert.equal(renderCase('tls-valid'), renderCase('tls-valid'));
});

test('runRender writes model.json, backends.json and servers.json (pretty, trailing newline)', async () => {
  const out = mkdtempSync(join(tmpdir(), 'ingress-rx-render-'));
  const stderr = process.stderr.write.bind(process.stderr);
  const lines: string[] = [];
  process.stderr.write = ((chunk: string) => { lines.push(String(chunk)); return true; }) as typeof process.stderr.write;
  try {
    const code = await runRender({ manifests: join(ROOT, 'missing-service', 'manifests'), out, logger: silentLogger() });
    assert.is(code, 0);
    const expected = renderCase('missing-service');
    for (const f of ['backends.json', 'servers.json']) assert.fixture(readFileSync(join(out, f), 'utf8'), expected[f]!, f);
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
