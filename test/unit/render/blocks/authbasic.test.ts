// authbasic block: auth_basic with the Secret's htpasswd file (written beside nginx.conf, one
// directory per namespace), the client's credentials kept from the backend; digest denies.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { BasicAuthConfig } from '../../../../src/model/ingress/annotations/authbasic.js';
import { authBasicBlock } from '../../../../src/render/blocks/authbasic.js';
import { location } from '../../../support/config-builder.js';
import { RUNTIME, inOrder, renderLocation } from '../../../support/render-blocks.js';

const AUTH: BasicAuthConfig = { type: 'basic', realm: 'Staff only', secret: 'team-x/auth', secretType: 'auth-file', users: ['bob:$apr1$x$y'] };

test('auth_basic in the access slot and Authorization "" before the standard headers', () => {
  const text = renderLocation({ basicAuth: AUTH, denylist: ['10.0.0.0/8'] }).locationsText;
  inOrder(text, 'deny 10.0.0.0/8;', 'auth_basic "Staff only";', 'auth_basic_user_file "/var/lib/ingress-rx/auth/team-x/auth.passwd";',
    'proxy_set_header Authorization "";', 'proxy_set_header Host $this_host;', 'proxy_pass');
});

test('the htpasswd file: one per Secret, private to the workers, none for a denied location, a line that would break the file refused', () => {
  assert.equal(authBasicBlock.files!(location({ basicAuth: AUTH }), RUNTIME), [{ path: '/var/lib/ingress-rx/auth/team-x/auth.passwd', content: 'bob:$apr1$x$y\n', mode: 0o600, readByWorkers: true }]);
  assert.equal(authBasicBlock.files!(location({ basicAuth: AUTH, denied: 'annotation x: bad' }), RUNTIME), []);
  assert.throws(() => authBasicBlock.files!(location({ basicAuth: { ...AUTH, users: ['bob:x\nroot:y'] } }), RUNTIME), /invalid htpasswd line/);
});

test('digest is not served: the location answers 503, saying why', () => {
  const text = renderLocation({ basicAuth: { ...AUTH, type: 'digest' } }).locationsText;
  assert.match(text, '# denied: auth-type digest is not supported');
  assert.not.match(text, 'auth_basic');
});

test.run();
