// ipallowlist block: `allow` per network and then `deny all`, in the access slot.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bodyLines, renderLocation } from '../../../support/render-blocks.js';

test('allow per network, then deny all; nothing without a list', () => {
  const lines = bodyLines(renderLocation({ allowlist: ['10.0.0.0/8', '192.168.1.1'] }));
  const at = lines.indexOf('allow 10.0.0.0/8;');
  assert.equal(lines.slice(at, at + 3), ['allow 10.0.0.0/8;', 'allow 192.168.1.1;', 'deny all;']);
  assert.not.match(renderLocation({}).locationsText, /\ballow\b|deny all/);
});

test('a value that is no network denies the location', () => {
  const view = renderLocation({ allowlist: ['0.0.0.0/0\n'] });
  assert.equal(view.problems.map((p) => p.field), ['whitelist-source-range']);
});

test.run();
