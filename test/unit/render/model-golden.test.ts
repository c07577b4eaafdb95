// nginx.conf for every model fixture (test/fixtures/model/<case>/manifests), compared with
// test/fixtures/render/model/<case>.conf (UPDATE_GOLDEN=1 rewrites), and each passes `nginx -t`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRenderer } from '../../../src/render/engine.js';
import { defaultRuntime, DEFAULT_TEMPLATE_DIR } from '../../../src/render/runtime.js';
import { silentLogger } from '../../../src/log.js';
import { createNginxHarness, type NginxHarness } from '../../support/nginx-harness.js';
import { buildFixture, fixtureCases } from '../../support/model-fixtures.js';

const OUT = fileURLToPath(new URL('../../fixtures/render/model/', import.meta.url));
const RUNTIME = defaultRuntime({ prefix: '/var/lib/ingress-rx', openFilesLimit: 1048576, listenAddresses: ['*'], luaDir: '/opt/ingress-rx/lua', resolvers: ['10.96.0.10'], cpus: 2 });
const update = process.env.UPDATE_GOLDEN === '1';

const cases = fixtureCases();

function model(name: string) {
  return buildFixture(name).config;
}

let h: NginxHarness;
test.before(async () => { h = await createNginxHarness(); });
test.after(async () => { await h.close(); });

test('there are model fixtures', () => {
  assert.ok(cases.length > 0);
});

for (const name of cases) {
  test(`model fixture ${name}: golden nginx.conf, and nginx -t passes`, async () => {
    const config = model(name);
    const text = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() }).render(config, RUNTIME).replace(/[0-9a-f]{64}/g, '<checksum>');
    const file = join(OUT, `${name}.conf`);
    if (update || !existsSync(file)) {
      mkdirSync(OUT, { recursive: true });
      writeFileSync(file, text);
    }
    assert.fixture(text, readFileSync(file, 'utf8'));
    const r = await h.test(h.renderer.render(config, h.runtime));
    assert.ok(r.ok, r.output);
  });
}

test.run();
