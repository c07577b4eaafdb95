// sslcipher block: the host's ssl_ciphers and ssl_prefer_server_ciphers in its server block, and
// the ConfigMap's ssl-reject-handshake in the default server only.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultSettings } from '../../../../src/model/core/config/parse.js';
import { sslCipherBlock } from '../../../../src/render/blocks/sslcipher.js';
import { server } from '../../../support/config-builder.js';
import { RUNTIME, renderServer } from '../../../support/render-blocks.js';

test('the host\'s cipher list and preference; none without annotations', () => {
  const view = renderServer([{ path: '/' }], { server: { tlsSettings: { authTLS: null, proxySSL: null, sslCiphers: 'ECDHE-ECDSA-AES128-GCM-SHA256', sslPreferServerCiphers: false } } });
  assert.match(view.directives, /ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256;\n\s+ssl_prefer_server_ciphers off;/);
  assert.not.match(renderServer([{ path: '/' }]).directives, 'ssl_');
  // A list that reached the model unchecked is refused by the filter, not printed.
  const hostile = renderServer([{ path: '/' }], { server: { tlsSettings: { authTLS: null, proxySSL: null, sslCiphers: 'HIGH; return 200', sslPreferServerCiphers: null } } });
  assert.not.match(hostile.directives, 'ssl_ciphers');
  assert.equal(hostile.problems.map((p) => p.field), ['ssl-ciphers']);
});

test('ssl-reject-handshake only in the default server', () => {
  const settings = { ...defaultSettings(), sslRejectHandshake: true };
  const ctx = (hostname: string) => ({ server: server(hostname), settings, runtime: RUNTIME }) as Parameters<NonNullable<NonNullable<typeof sslCipherBlock.server>['directives']>>[0];
  assert.match(sslCipherBlock.server!.directives!(ctx('_')), 'ssl_reject_handshake on;');
  assert.is(sslCipherBlock.server!.directives!(ctx('app.example.com')), '');
});

test.run();
