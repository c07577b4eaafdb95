// Values ingress-nginx accepts (its validators in internal/ingress/annotations/*/main.go and
// parser/validators.go, its docs and e2e manifests, and manifests of public projects) are accepted
// here too: no warning on the key, and the whole configuration passes the real `nginx -t`. The
// audit's refusals that stay are in docs/differences.md; hostile values are hostile.test.ts's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createModelBuilder } from '../../../../src/model/build.js';
import { auxiliaryFiles } from '../../../../src/render/engine.js';
import type { Secret } from '../../../../src/store/kube-types.js';
import { createNginxHarness } from '../../../support/nginx-harness.js';
import { PREFIX, ingress, service, slice, testStore } from '../../../support/model-objects.js';

const dir = mkdtempSync(join(tmpdir(), 'irx-accepted-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'k.pem', '-out', 'c.pem', '-days', '1', '-subj', '/CN=ca'], { cwd: dir, stdio: 'ignore' });
const CA = readFileSync(join(dir, 'c.pem'), 'utf8');
const KEY = readFileSync(join(dir, 'k.pem'), 'utf8');
rmSync(dir, { recursive: true, force: true });

/** Each case: annotations (unprefixed) ingress-nginx accepts together, and where the value comes from. */
const CASES: Array<[string, Record<string, string>]> = [
  // upstreamvhost: ValidateServerName (host characters, `$`, braces).
  ['Linkerd dashboard', { 'upstream-vhost': '$service_name.$namespace.svc.cluster.local:8084' }],
  ['upstream-vhost request header', { 'upstream-vhost': '${http_x_tenant}.internal' }],
  ['upstream-vhost host', { 'upstream-vhost': '$host' }],
  // authreq: URLWithNginxVariableRegex; ingress-nginx's external-auth docs and oauth2-proxy's.
  ['oauth2-proxy', { 'auth-url': 'https://$host/oauth2/auth', 'auth-signin': 'https://$host/oauth2/start?rd=$escaped_request_uri', 'auth-response-headers': 'X-Auth-Request-User, X-Auth-Request-Email' }],
  ['oauth2-proxy central', { 'auth-url': 'http://oauth2-proxy.auth.svc.cluster.local:4180/oauth2/auth', 'auth-signin': 'https://auth.example.com/oauth2/start?rd=https://$host$escaped_request_uri' }],
  ['auth cache key', { 'auth-url': 'http://auth.example.com/', 'auth-cache-key': '$remote_user$http_authorization', 'auth-cache-duration': '200 202 401 30m' }],
  ['auth cache key braced', { 'auth-url': 'http://auth.example.com/', 'auth-cache-key': '${cookie__oauth2_proxy}' }],
  ['auth cache key client cert', { 'auth-url': 'http://auth.example.com/', 'auth-cache-key': '$ssl_client_s_dn' }],
  // mirror: ValidateServerName for mirror-host; ingress-nginx's e2e target.
  ['mirror docs', { 'mirror-target': 'https://test.env.com/$request_uri', 'mirror-host': '$host' }],
  ['mirror host template', { 'mirror-target': 'http://mirror.example.com$request_uri', 'mirror-host': 'copy-${http_x_tenant}.example.com' }],
  // proxyssl: ValidateServerName for proxy-ssl-name.
  ['proxy-ssl-name template', { 'proxy-ssl-secret': 'default/ca', 'proxy-ssl-name': '$service_name.$namespace.svc', 'proxy-ssl-server-name': 'on', 'proxy-ssl-verify': 'on' }],
  // upstreamhashby: `^[A-Za-z0-9\-_${}]*$`.
  ['hash braced', { 'upstream-hash-by': '${request_uri}$host' }],
  ['hash cookie', { 'upstream-hash-by': '$cookie_session' }],
  // xforwardedprefix: RegexPathWithCapture.
  ['x-forwarded-prefix capture', { 'x-forwarded-prefix': '/$1', 'use-regex': 'true', 'rewrite-target': '/$2' }],
  // sessionaffinity: `(^0|-?[1-9]\d*$)` for expires and max-age.
  ['negative cookie lifetime', { affinity: 'cookie', 'session-cookie-expires': '-1', 'session-cookie-max-age': '-1' }],
  // cors: corsOriginRegex allows `null` and any lower-case scheme; methods any letters; expose `*`.
  ['cors null origin', { 'enable-cors': 'true', 'cors-allow-origin': 'null, https://app.example.com, test://localhost' }],
  ['cors WebDAV methods', { 'enable-cors': 'true', 'cors-allow-methods': 'GET, PUT, PROPFIND, MKCOL', 'cors-expose-headers': '*, X-CustomResponseHeader' }],
  ['cors ingress-nginx e2e', { 'enable-cors': 'true', 'cors-allow-origin': 'https://origin.cors.com:8080, http://*.origin.cors.com', 'cors-allow-headers': 'DNT,X-CustomHeader,Keep-Alive,User-Agent', 'cors-allow-credentials': 'false', 'cors-max-age': '200' }],
  // modsecurity: NGINXVariable for the transaction id.
  ['modsecurity transaction id', { 'enable-modsecurity': 'true', 'modsecurity-transaction-id': 'modsecurity-$request_id' }],
];

const SECRETS: Secret[] = [{ metadata: { name: 'ca', namespace: 'default' }, data: { 'ca.crt': Buffer.from(CA).toString('base64'), 'tls.crt': Buffer.from(CA).toString('base64'), 'tls.key': Buffer.from(KEY).toString('base64') } }];

test('each value ingress-nginx accepts is read without a warning on its key', () => {
  const store = testStore();
  store.put('Service', service('web'));
  for (const s of SECRETS) store.put('Secret', s);
  CASES.forEach(([, annotations], i) => store.put('Ingress', ingress(`case-${i}`, `case-${i}.example.com`, [['/', 'Prefix', 'web', 80]], { annotations })));
  const { warnings } = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181 }).build(store);
  const onKeys = warnings.filter((w) => w.field.startsWith(`metadata.annotations["${PREFIX}/`)).map((w) => `${w.object} ${CASES[Number(/case-(\d+)/.exec(w.object)?.[1])]?.[0]}: ${w.field}: ${w.message}`);
  assert.equal(onKeys, []);
});

test('the configuration holding all of them passes nginx -t, and prints their variables as variables', async () => {
  const store = testStore();
  store.put('Service', service('web'));
  store.put('EndpointSlice', slice('web-1', 'web', ['10.1.0.1']));
  for (const s of SECRETS) store.put('Secret', s);
  CASES.forEach(([, annotations], i) => store.put('Ingress', ingress(`case-${i}`, `case-${i}.example.com`, [['/', 'Prefix', 'web', 80]], { annotations })));
  const { config } = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181 }).build(store);
  const h = await createNginxHarness();
  try {
    const text = h.renderer.render(config, h.runtime);
    assert.ok(text.includes('set $upstream_vhost "$service_name.$namespace.svc.cluster.local:8084";'));
    assert.ok(text.includes('proxy_ssl_name "$service_name.$namespace.svc";'));
    assert.ok(text.includes('proxy_set_header X-Forwarded-Prefix "/$1";'));
    assert.match(text, /proxy_cache_key "[^"]*:\$ssl_client_s_dn";/);
    for (const file of auxiliaryFiles(config, h.runtime)) {
      mkdirSync(dirname(file.path), { recursive: true });
      writeFileSync(file.path, file.content);
    }
    const r = await h.test(text);
    assert.ok(r.ok, r.output);
  } finally {
    await h.close();
  }
});

test.run();
