// server_names_hash is sized for the host names: a long name needs a bigger bucket than
// ingress-nginx's default 64 (else `nginx -t` refuses the configuration), many names a bigger table.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { createRenderer, serverNamesHash } from '../../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR } from '../../src/render/runtime.js';
import { scratchRuntime, testOffline } from '../../src/render/offline.js';
import { silentLogger } from '../../src/log.js';
import { configuration, server } from '../support/config-builder.js';

const label = (c: string) => c.repeat(60);
const longHost = `${label('a')}.${label('b')}.${label('c')}.example.com`; // 195 characters

test('the bucket grows to hold the longest host name, the table to hold every name', () => {
  const many = configuration(Array.from({ length: 3000 }, (_, i) => server(`host-${i}.example.com`)));
  assert.equal(serverNamesHash(many, 1024, 64), { max_size: 4096, bucket_size: 64 });
  assert.equal(serverNamesHash(configuration([server(longHost)]), 1024, 64), { max_size: 1024, bucket_size: 256 });
  assert.equal(serverNamesHash(configuration([server('a.example.com')]), 2048, 128), { max_size: 2048, bucket_size: 128 }, 'the ConfigMap values are a floor');
});

test('a 195-character host name passes the real nginx -t', async () => {
  const rt = await scratchRuntime(8181);
  try {
    const result = testOffline(createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() }), configuration([server(longHost)]), rt);
    assert.ok(result.ok, result.error);
  } finally {
    rmSync(rt.prefix, { recursive: true, force: true });
  }
});

test.run();
