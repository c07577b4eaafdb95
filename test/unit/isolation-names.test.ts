// Files named after Kubernetes objects never collide across namespaces: the htpasswd file of
// Secret team-x/auth is not that of team/x-auth, whatever characters the names hold.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { authFilePath, defaultRuntime, pathComponent } from '../../src/render/runtime.js';

const rt = defaultRuntime({ prefix: '/var/lib/ingress-rx' });

test('team-x/auth and team/x-auth get two files, each under its namespace', () => {
  assert.is(authFilePath(rt, 'team-x/auth'), '/var/lib/ingress-rx/auth/team-x/auth.passwd');
  assert.is(authFilePath(rt, 'team/x-auth'), '/var/lib/ingress-rx/auth/team/x-auth.passwd');
});

test('every distinct Secret reference gets a distinct path inside the auth directory', () => {
  // Names a manifests directory may hold (no API server validates them in local mode).
  const alphabet = ['a', 'b', '-', '.', '%', '/', '_', ' ', 'é', '2'];
  const refs = new Set<string>(['..', '../x', 'x/..', './a', 'a/.', '%2F', '/', 'a/', '/a', 'a%2Fb/c', 'a/b%2Fc', 'a/b/c']);
  let seed = 7;
  const next = () => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed >>> 8; };
  for (let i = 0; i < 4000; i++) {
    const len = 1 + (next() % 7);
    refs.add(Array.from({ length: len }, () => alphabet[next() % alphabet.length]).join(''));
  }
  const byPath = new Map<string, string>();
  for (const ref of refs) {
    const p = authFilePath(rt, ref);
    assert.ok(p.startsWith(`${join(rt.prefix, 'auth')}/`), `${ref} → ${p}`);
    assert.not.ok(p.split('/').some((c) => c === '..' || c === '.'), `${ref} → ${p}`);
    const other = byPath.get(p);
    assert.is(other, undefined, `${JSON.stringify(ref)} and ${JSON.stringify(other)} share ${p}`);
    byPath.set(p, ref);
  }
});

test('path components escape what is not plain, the escape character included', () => {
  assert.is(pathComponent('plain-name.v2_x'), 'plain-name.v2_x');
  assert.is(pathComponent('a%b/c d'), 'a%25b%2Fc%20d');
  assert.is(pathComponent('..'), '%2E.');
  assert.is(pathComponent('.hidden'), '%2Ehidden');
});

test.run();
