// The canonical text the snapshot hashes: key order does not matter, any content change does,
// and it tells objects apart exactly as fast-json-stable-stringify does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import stringify from 'fast-json-stable-stringify';
import { canonicalDigest, canonicalText } from '../../../src/model/core/canonical.js';

/** A small deterministic PRNG, so failures reproduce. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/** Random JSON-like values from a small alphabet, so that equal values are common; `shared` sub-objects are reused. */
function randomValue(r: () => number, depth: number, shared: unknown[]): unknown {
  const k = r();
  if (depth > 0 && k < 0.15 && shared.length > 0) return shared[Math.floor(r() * shared.length)];
  if (depth > 0 && k < 0.45) {
    const o: Record<string, unknown> = {};
    const keys = ['a', 'b', 'c', 'd', 'path', 'proxy', 'x y', 'ü'].sort(() => r() - 0.5).slice(0, 1 + Math.floor(r() * 5));
    for (const key of keys) o[key] = randomValue(r, depth - 1, shared);
    if (r() < 0.3) shared.push(o);
    return o;
  }
  if (depth > 0 && k < 0.6) return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth - 1, shared));
  const leaves = [null, true, false, 0, 1, 2.5, -1, '', 'a', '"q"', 'x'.repeat(70), '{"a":1}', '#abc', undefined];
  return leaves[Math.floor(r() * leaves.length)];
}

test('equal content in another key order gives the same text; longer parts appear as digests', () => {
  const a = { path: '/api', proxy: { bodySize: '1m', connectTimeout: 5, nextUpstream: ['error', 'timeout'], buffering: 'off' }, n: 1 };
  const b = { n: 1, proxy: { buffering: 'off', nextUpstream: ['error', 'timeout'], connectTimeout: 5, bodySize: '1m' }, path: '/api' };
  assert.is(canonicalText(a), canonicalText(b));
  assert.match(canonicalText({ ...a, note: 'a string that makes this object longer than the inline limit' }), /^#/, 'a long object is its digest');
  assert.is(canonicalText({ s: 'x' }), stringify({ s: 'x' }), 'a short object is its JSON');
});

test('any change, however deep, changes the text', () => {
  const base = () => ({ locations: [{ path: '/', proxy: { bodySize: '1m', timeouts: [5, 60, 60], headers: { 'x-a': 'long value '.repeat(8) } } }] });
  const variants = [
    (o: ReturnType<typeof base>) => { o.locations[0]!.proxy.bodySize = '2m'; },
    (o: ReturnType<typeof base>) => { o.locations[0]!.proxy.timeouts[2] = 61; },
    (o: ReturnType<typeof base>) => { o.locations[0]!.proxy.headers['x-a'] += '!'; },
    (o: ReturnType<typeof base>) => { o.locations[0]!.path = '/b'; },
    (o: ReturnType<typeof base>) => { o.locations.push(o.locations[0]!); },
  ];
  const original = canonicalText(base());
  for (const change of variants) {
    const o = base();
    change(o);
    assert.is.not(canonicalText(o), original, String(change));
  }
});

test('tells values apart exactly as fast-json-stable-stringify (random values with shared sub-objects)', () => {
  const r = rng(7);
  const shared: unknown[] = [];
  // Top-level undefined is not a JSON value (the library returns undefined for it).
  const values = Array.from({ length: 400 }, () => randomValue(r, 4, shared)).filter((v) => v !== undefined);
  let equalPairs = 0;
  for (let i = 0; i < values.length; i++) {
    for (let j = i + 1; j < values.length; j++) {
      const lib = stringify(values[i]) === stringify(values[j]);
      assert.is(canonicalText(values[i]) === canonicalText(values[j]), lib, `${stringify(values[i])} vs ${stringify(values[j])}`);
      if (lib) equalPairs++;
    }
  }
  assert.ok(equalPairs > 50, `the sample has equal pairs to compare (${equalPairs})`);
});

test('a shared object is serialised once (memoised by identity)', () => {
  let reads = 0;
  const group: Record<string, unknown> = {};
  Object.defineProperty(group, 'bodySize', { enumerable: true, get: () => { reads++; return 'a value long enough to be digested: '.repeat(6); } });
  canonicalText({ path: '/a', proxy: group });
  canonicalText({ path: '/b', proxy: group });
  canonicalText([group, group]);
  assert.is(reads, 1);
});

test('canonicalDigest: a digest of the canonical text; overrides act as a spread copy would', () => {
  const server = { hostname: 'a.example.com', certificate: 'uid-1', tlsSecret: 'ns/tls', locations: [{ path: '/', backend: 'ns-svc-80' }] };
  const stripped = canonicalDigest(server, { certificate: null, tlsSecret: null });
  assert.is(stripped, canonicalDigest({ ...server, certificate: null, tlsSecret: null }));
  assert.is(stripped, canonicalDigest({ ...server, certificate: 'uid-2', tlsSecret: 'ns/other' }, { certificate: null, tlsSecret: null }));
  assert.is.not(stripped, canonicalDigest({ ...server, hostname: 'b.example.com' }, { certificate: null, tlsSecret: null }));
  assert.is.not(stripped, canonicalDigest(server));
  assert.match(canonicalDigest([1]), /^#[A-Za-z0-9+/]{27}=$/, 'short values are digested too');
  assert.is(canonicalDigest({ a: 'x'.repeat(200) }), canonicalText({ a: 'x'.repeat(200) }), 'a long value is its memoised digest');
});

test.run();
