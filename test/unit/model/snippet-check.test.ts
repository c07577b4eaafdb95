// Snippets are read as NGINX reads them: what NGINX takes for a word (`${`, `z}`, `\}`), a
// string or a comment never counts as a brace, Lua block bodies follow the Lua module's lexer,
// and a snippet that would leave its block or reach outside the Ingress is refused by line.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readSnippet, snippetPeer, snippetProblem } from '../../../src/model/checks/snippet-check.js';
import { parseAnnotations } from '../../../src/model/ingress/annotations/index.js';
import type { AddressPolicy } from '../../../src/model/checks/address-policy.js';
import { defaultSettings } from '../../../src/model/core/config/defaults.js';
import { createStore, defaultStoreOptions } from '../../../src/store/store.js';
import { ANNOTATION_REFERENCES } from '../../../src/model/ingress/annotations/index.js';

test('ordinary snippets pass, and are read directive by directive', () => {
  const ok = [
    'more_set_headers "X-Frame-Options: {deny}";',
    'location /x { return 200; }',
    'if ($http_x_debug = "1") { return 403; }',
    'set $v "${host}x"; set $w ${host}y;',
    'rewrite ^/(.*)$ /$1 break;',
    '# a comment with } and { and ;\nreturn 200 "ok";',
    "add_header X-A 'single ; quoted }';",
    'return 200 a\\;b;',
    'content_by_lua_block {\n  local t = { a = "}" }\n  ngx.say([[ } ]], \'}\') -- }\n  --[==[ } ]==]\n}',
    'access_by_lua_block { if ngx.var.arg_x == "{" then return ngx.exit(403) end }',
    '',
  ];
  for (const s of ok) assert.is(snippetProblem(s), null, s);
  assert.equal(readSnippet('set $a ${x}y;\nlocation /p { return 200 z}; }\n').map((d) => [d.name, d.args, d.line]), [
    ['set', ['$a', '${x}y'], 1], ['location', ['/p'], 2], ['return', ['200', 'z}'], 2],
  ]);
  assert.equal(readSnippet('"return" 200 \'a\\\'b\';').map((d) => [d.name, d.args]), [['return', ['200', "a'b"]]]);
});

test('snippets that leave their block are refused, however they hide the brace', () => {
  const escapes: Array<[string, RegExp]> = [
    // Issue 14's escape: NGINX reads `${${` and `z}z}` as words, a brace counter does not.
    ['set $a ${${;\n}\n}\nserver { listen 9999; location / { return 200 pwned; } }\nserver { location /y {\nset $b z}z};', /line 2: closes a block it did not open/],
    ['}', /closes a block/],
    ['return 200; } location /admin {', /line 1: closes a block/],
    ['location /x {', /leaves a block open/],
    ['return 200 "unterminated;', /quoted string is never closed/],
    ['return 200', /"return" is not ended with ";"/],
    ['more_set_headers "X: y"', /not ended/],
    ['add_header X "a"b;', /unexpected "b" after a quoted string/],
    ['return 200 x } server {', /unexpected "}" inside a directive/],
    ['content_by_lua_block { ngx.say("x") } } server { listen 9999; } location /z {', /closes a block/],
    ['content_by_lua_block { local s = [[ } ]] } }', /closes a block/],
    ['content_by_lua_block { local s = [==[ }', /Lua long string or comment is never closed/],
    ['content_by_lua_block { ngx.say("}) }', /Lua string/],
    ['content_by_lua_block { -- }\n', /Lua block is never closed/],
  ];
  for (const [s, reason] of escapes) {
    const p = snippetProblem(s);
    assert.ok(p, `refused: ${JSON.stringify(s)}`);
    assert.match(p!, reason, s);
  }
});

test('directives that reach outside the Ingress are refused, quoted or not', () => {
  const refused: Array<[string, RegExp]> = [
    ['server { listen 81; }', /"server" opens a block that belongs outside an Ingress/],
    ['http { }', /"http" opens a block/],
    ['stream { server { listen 81; } }', /"stream" opens a block/],
    ['events { }', /"events"/],
    ['upstream u { server 10.0.0.1; }', /"upstream"/],
    ['include /etc/passwd;', /"include" reads another file/],
    ['"include" /etc/passwd;', /"include" reads another file/],
    ["'inc\\lude' x;", null as unknown as RegExp],
    ['load_module /tmp/evil.so;', /loads an NGINX module/],
    ['alias /www/html;', /"alias" serves files from the controller's filesystem/],
    ['location /x { "root" /srv/www; }', /"root" serves files/],
    ['ssl_engine pkcs11;', /loads an OpenSSL engine/],
    ['content_by_lua_file /tmp/x.lua;', /loads Lua from a file/],
    ['access_by_lua_file /tmp/x.lua;', /loads Lua from a file/],
    ['ssl_certificate_by_lua_file x.lua;', /loads Lua from a file/],
    ['lua_package_path "/tmp/?.lua;;";', /loads Lua from a file/],
    ['return 200 ok;\nproxy_pass http://unix:/run/ingress-rx/control.sock:/configuration/certs;', /line 2: "proxy_pass" names a unix socket/],
    ['fastcgi_pass UNIX:/run/php.sock;', /names a unix socket/],
  ];
  for (const [s, reason] of refused) {
    const p = snippetProblem(s);
    if (reason === null) {
      // NGINX keeps the backslash of `\l`: the directive is `inc\lude`, which is no directive at all.
      assert.is(p, null, s);
      continue;
    }
    assert.ok(p, `refused: ${s}`);
    assert.match(p!, reason, s);
  }
});

test('the peer a snippet directive dials, as written: URLs, addresses, an upstream\'s servers; variables and names without a port are not judged', () => {
  const peer = (text: string) => { const d = readSnippet(text)[0]!; return snippetPeer(d); };
  assert.equal(peer('proxy_pass http://127.0.0.1:10254/metrics;'), { host: '127.0.0.1', port: '10254' });
  assert.equal(peer('proxy_pass https://[::1]/x;'), { host: '[::1]', port: '443' });
  assert.equal(peer('grpc_pass grpc://0x7f.1:50051;'), { host: '0x7f.1', port: '50051' });
  assert.equal(peer('fastcgi_pass 127.1:9000;'), { host: '127.1', port: '9000' });
  assert.equal(peer('proxy_pass 127.0.0.1:10254;'), { host: '127.0.0.1', port: '10254' }, 'a stream proxy_pass');
  assert.equal(peer('server [::ffff:7f00:1]:10254 weight=2;'), { host: '[::ffff:7f00:1]', port: '10254' }, "an upstream's server");
  assert.equal(peer('proxy_pass http://localhost;'), { host: 'localhost', port: '80' });
  assert.is(peer('proxy_pass http://$target;'), null);
  assert.is(peer('proxy_pass own;'), null, 'an upstream block by name');
  assert.is(peer('server { listen 81; }'), null, 'a server block opens, it dials nothing');
  assert.is(peer('return 200 http://127.0.0.1:1/;'), null);
});

/** The snippets of one Ingress, parsed as the model parses them with `policy`. */
function snippetsWith(policy: AddressPolicy | undefined, annotations: Record<string, string>) {
  const P = 'nginx.ingress.kubernetes.io';
  const ing = { metadata: { name: 'evil', namespace: 'team-b', annotations: Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${P}/${k}`, v])) }, spec: {} };
  const store = createStore(defaultStoreOptions(), ANNOTATION_REFERENCES);
  return parseAnnotations(ing, { prefix: P, settings: { ...defaultSettings(), allowSnippetAnnotations: true, annotationsRiskLevel: 'Critical' }, store, ...(policy ? { addressPolicy: policy } : {}) });
}

test('with snippets allowed, a snippet dialling the node is refused as endpoints are: every loopback by default, the controller\'s own ports always', () => {
  const local: AddressPolicy = { allow: new Set(['loopback']), ownPorts: new Set([10254, 8181]) };
  const pod: AddressPolicy = { allow: new Set(), ownPorts: new Set([80, 10254, 8181]), dataPlanePorts: new Set([80]), ownAddresses: new Set(['10.1.2.3']) };
  const cases: Array<[string, string, AddressPolicy | undefined, RegExp | null]> = [
    ['server-snippet', 'location /m { proxy_pass http://127.0.0.1:10254/metrics; }', local, /line 1: "proxy_pass" connects to 127\.0\.0\.1:10254: refused by the upstream address policy: port 10254 of this node is one of the controller's own listeners/],
    ['configuration-snippet', 'mirror /m;\nlocation /m { proxy_pass http://localhost:8181; }', local, /line 2: .*localhost:8181.*own listeners/],
    ['stream-snippet', 'upstream u { server 2130706433:10254; }\nserver { listen 9000; proxy_pass u; }', local, /line 1: "server" connects to 2130706433:10254/],
    ['stream-snippet', 'server { listen 9000; proxy_pass 127.0.0.3:5432; }', local, null],
    // NGINX's own HTTP(S) listeners serve anyone: ingress-nginx's stream-snippet e2e forwards to them.
    ['stream-snippet', 'server { listen 8000; proxy_pass 127.0.0.1:80; }', undefined, null],
    ['stream-snippet', 'server { listen 8000; proxy_pass 127.0.0.1:8443; }', { ...local, ownPorts: new Set([8443, 10254]), dataPlanePorts: new Set([8443]) }, null],
    ['stream-snippet', 'server { listen 8000; proxy_pass 10.0.0.1:80; }', undefined, null],
    ['stream-snippet', 'server { listen 8000; proxy_pass 169.254.169.254:80; }', undefined, /a metadata address/],
    ['stream-snippet', 'server { listen 9000; proxy_pass 127.0.0.3:5432; }', undefined, /a loopback address \(allowed only with --allow-upstream-addresses=loopback\)/],
    ['server-snippet', 'location /m { proxy_pass http://169.254.169.254/latest/; }', local, /a metadata address/],
    ['server-snippet', 'location /m { proxy_pass http://10.0.0.7:8080; }', undefined, null],
    ['auth-snippet', 'proxy_set_header X-A b;\nproxy_pass http://[::1]:8181;', local, /line 2: .*\[::1\]:8181.*own listeners/],
    // The controller pod's own address reaches the same listeners as loopback does.
    ['server-snippet', 'location /m { proxy_pass http://10.1.2.3:10254/metrics; }', pod, /"proxy_pass" connects to 10\.1\.2\.3:10254: .*port 10254 of 10\.1\.2\.3, an address of the controller's own pod/],
    ['stream-snippet', 'upstream u { server [::ffff:a01:203]:8181; }\nserver { listen 9000; proxy_pass u; }', pod, /line 1: .*an address of the controller's own pod/],
    ['stream-snippet', 'server { listen 8000; proxy_pass 10.1.2.3:80; }', pod, null],
    ['server-snippet', 'location /m { proxy_pass http://10.1.2.3:9000; }', pod, null],
  ];
  for (const [key, text, policy, refused] of cases) {
    const extra: Record<string, string> = key === 'auth-snippet' ? { 'auth-url': 'https://auth.example.com/' } : {};
    const { value, warnings } = snippetsWith(policy, { [key]: text, ...extra });
    const kept = key === 'auth-snippet' ? value.externalAuth?.snippet ?? '' : key === 'stream-snippet' ? value.streamSnippet : key === 'server-snippet' ? value.serverSnippet : value.configurationSnippet;
    const warning = warnings.find((w) => w.field.includes(key))?.message ?? '';
    if (refused === null) {
      assert.is(kept, text, `${key}: ${text}`);
    } else {
      assert.is(kept, '', `${key} refused: ${text}`);
      assert.match(warning, refused, `${key}: ${text}`);
    }
  }
});

test.run();
