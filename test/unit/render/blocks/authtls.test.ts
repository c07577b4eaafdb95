// authtls block: client authentication in the server block (CA and CRL files from the Secret,
// written per namespace), the certificate's verdict and names sent upstream, plain HTTP always
// redirected to HTTPS, and settings that cannot be used closing the host instead of opening it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ClientCertAuth } from '../../../../src/model/ingress/annotations/authtls.js';
import type { ServerTLSSettings } from '../../../../src/model/core/types.js';
import { authTLSBlock } from '../../../../src/render/blocks/authtls.js';
import { server } from '../../../support/config-builder.js';
import { RUNTIME, inOrder, renderServer } from '../../../support/render-blocks.js';

const AUTH: ClientCertAuth = {
  secret: 'team-x/ca', ca: '-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n', crl: 'crl', verifyClient: 'on', verifyDepth: 2,
  errorPage: 'https://errors.example/cert', passCertificateToUpstream: true, matchCN: 'CN=(alice|bob)$',
};
const tls = (authTLS: ServerTLSSettings['authTLS']): ServerTLSSettings => ({ authTLS, proxySSL: null, sslCiphers: '', sslPreferServerCiphers: null });

test('server directives, headers upstream, and the forced HTTPS redirect', () => {
  const view = renderServer([{ path: '/' }, { path: '/.well-known/acme-challenge/x' }], { server: { tlsSettings: tls(AUTH) } });
  inOrder(view.directives, 'ssl_client_certificate "/var/lib/ingress-rx/ssl-ca/team-x/ca.crt";', 'ssl_verify_client on;', 'ssl_verify_depth 2;',
    'ssl_crl "/var/lib/ingress-rx/ssl-crl/team-x/ca.crl";', 'error_page 495 496 = "https://errors.example/cert";',
    'if ($ssl_client_s_dn !~ "CN=(alice|bob)$") {', 'return 403 "client certificate unauthorized";');
  inOrder(view.locationsText, 'lua_ingress.rewrite("force-ssl-redirect"', 'proxy_set_header ssl-client-cert $ssl_client_escaped_cert;',
    'proxy_set_header ssl-client-verify $ssl_client_verify;', 'proxy_set_header ssl-client-subject-dn $ssl_client_s_dn;');
  // The ACME challenge location (no-tls-redirect-locations) keeps plain HTTP.
  const acme = view.locationsText.slice(view.locationsText.indexOf('acme-challenge'));
  assert.not.match(acme.slice(0, acme.indexOf('proxy_pass')), 'lua_ingress.rewrite(');
  const optional = renderServer([{ path: '/' }], { server: { tlsSettings: tls({ ...AUTH, verifyClient: 'optional', passCertificateToUpstream: false }) } });
  assert.not.match(optional.locationsText, 'force-ssl-redirect');
  assert.not.match(optional.locationsText, 'ssl-client-cert');
});

test('settings that cannot be used close the host (403), saying why; files only for usable settings', () => {
  const closed = renderServer([{ path: '/' }], { server: { tlsSettings: tls({ error: 'annotation auth-tls-secret: Secret team-x/ca not found' }) } });
  assert.match(closed.directives, /# client certificate settings unusable: annotation auth-tls-secret: Secret team-x\/ca not found\n\s+return 403;/);
  assert.equal(authTLSBlock.serverFiles!(server('a.example.com', { tlsSettings: tls({ error: 'x' }) }), RUNTIME), []);
  // A match-cn NGINX's PCRE2 refuses (only reachable by a hand-made model) closes it too.
  const bad = renderServer([{ path: '/' }], { server: { tlsSettings: tls({ ...AUTH, matchCN: 'CN=(' }) } });
  assert.match(bad.directives, /unusable: .*\n\s+return 403;/);
  assert.not.match(bad.directives, 'ssl_client_certificate');
  assert.equal(authTLSBlock.serverFiles!(server('a.example.com', { tlsSettings: tls(AUTH) }), RUNTIME).map((f) => f.path),
    ['/var/lib/ingress-rx/ssl-ca/team-x/ca.crt', '/var/lib/ingress-rx/ssl-crl/team-x/ca.crl']);
});

test.run();
