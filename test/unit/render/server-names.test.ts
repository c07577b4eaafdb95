// server_names_hash is sized for the host names: a long name needs a bigger bucket than
// ingress-nginx's default 64 (else `nginx -t` refuses the configuration), many names a bigger table.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { createRenderer, serverNamesHash } from '../../../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR } from '../../../src/render/runtime.js';
import { scratchRuntime, testOffline } from '../../../src/render/offline.js';
import { silentLogger } from '../../../src/log.js';
import { configuration, server } from '../../support/config-builder.js';

const label = (c: string) => c.repeat(60);
const longHost = `${label('a')}.${label('b')}.${label('c')}.example.com`; // 195 characters

/** A host name of exactly `length` characters, in labels of at most 63. */
function hostOfLength(length: number, fill = 'a'): string {
  const labels: string[] = [];
  let left = length;
  while (left > 63) {
    const n = Math.min(63, left - 2); // leave a dot and at least one character
    labels.push(fill.repeat(n));
    left -= n + 1;
  }
  labels.push(fill.repeat(left));
  return labels.join('.');
}

test('the bucket grows to hold the longest host name, the table to hold every name', () => {
  const many = configuration(Array.from({ length: 3000 }, (_, i) => server(`host-${i}.example.com`)));
  assert.equal(serverNamesHash(many, 1024, 64), { max_size: 4096, bucket_size: 64 });
  assert.equal(serverNamesHash(configuration([server(longHost)]), 1024, 64), { max_size: 1024, bucket_size: 256 });
  // 47 characters: pointer + name + 2, rounded to 8, and the bucket's end pointer make 72 > 64.
  assert.equal(serverNamesHash(configuration([server(hostOfLength(46))]), 1024, 64).bucket_size, 64);
  assert.equal(serverNamesHash(configuration([server(hostOfLength(47))]), 1024, 64).bucket_size, 128);
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

test('every host length 1..253 (labels up to 63) passes the real nginx -t, grouped by the bucket size computed for it', async () => {
  const groups = new Map<number, string[]>();
  for (let length = 1; length <= 253; length++) {
    for (const name of [hostOfLength(length), hostOfLength(length, 'b')]) {
      assert.is(name.length, length);
      assert.ok(name.split('.').every((l) => l.length >= 1 && l.length <= 63), name);
    }
    const bucket = serverNamesHash(configuration([server(hostOfLength(length))]), 1024, 64).bucket_size;
    groups.set(bucket, [...(groups.get(bucket) ?? []), hostOfLength(length)]);
  }
  assert.equal([...groups.keys()], [64, 128, 256, 512]);
  const rt = await scratchRuntime(8181);
  const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() });
  try {
    // Each group's longest name sets its bucket; NGINX checks every name against it. A www twin
    // and an alias are names too.
    for (const [bucket, names] of groups) {
      const servers = names.map((n, i) => server(n, i === 0 ? { aliases: [`x${n.slice(1)}`] } : {}));
      const cfg = configuration(servers);
      assert.is(serverNamesHash(cfg, 1024, 64).bucket_size, bucket);
      const result = testOffline(renderer, cfg, rt);
      assert.ok(result.ok, `bucket ${bucket}: ${result.error}`);
    }
    const twin = hostOfLength(250);
    const withTwin = configuration([server(twin, { redirectFromToWWW: true })]);
    assert.is(serverNamesHash(withTwin, 1024, 64).bucket_size, 512, 'the www twin (254 > 253? no: 250 + 4) counts');
    const result = testOffline(renderer, withTwin, rt);
    assert.ok(result.ok, result.error);
  } finally {
    rmSync(rt.prefix, { recursive: true, force: true });
  }
});

test.run();
