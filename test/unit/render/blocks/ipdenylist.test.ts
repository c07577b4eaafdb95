// ipdenylist block: `deny` per network in the access slot, before the allowlist (NGINX takes the
// first rule that matches, so an address on both lists is refused).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inOrder, renderLocation } from '../../../support/render-blocks.js';

test('deny per network, before allow and deny all', () => {
  const text = renderLocation({ denylist: ['10.1.0.0/16', '2001:db8::/32'], allowlist: ['10.0.0.0/8'] }).locationsText;
  inOrder(text, 'deny 10.1.0.0/16;', 'deny 2001:db8::/32;', 'allow 10.0.0.0/8;', 'deny all;');
});

test('a value that is no network denies the location, naming the annotation', () => {
  const view = renderLocation({ denylist: ['10.0.0.0/8; allow all'] });
  assert.match(view.locationsText, 'return 503;');
  assert.equal(view.problems.map((p) => [p.field, p.outcome]), [['denylist-source-range', 'location denied (503)']]);
});

test.run();
