// Golden fixtures: each test/fixtures/model/<case>/manifests is built by the model builder and
// compared with <case>/expected/{model,backends,servers,warnings}.json. UPDATE_GOLDEN=1 rewrites them.
// model.json leaves out `settings` (the ConfigMap parser's own tests cover them).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { stableJSON } from '../../../src/model/core/json.js';
import { backendsPayload, serversPayload } from '../../../src/model/core/payload.js';
import { MODEL_FIXTURES as ROOT, buildFixture, fixtureCases } from '../../support/model-fixtures.js';

const update = process.env.UPDATE_GOLDEN === '1';

function renderCase(name: string): Record<string, string> {
  const r = buildFixture(name);
  assert.equal(r.manifestErrors, [], `${name}: manifest errors`);
  const { settings: _settings, ...model } = r.config;
  return {
    'model.json': stableJSON(model),
    'backends.json': stableJSON(backendsPayload(r.config)),
    'servers.json': stableJSON(serversPayload(r.config)),
    'warnings.json': stableJSON(r.warnings),
  };
}

const cases = fixtureCases();

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

test.run();
