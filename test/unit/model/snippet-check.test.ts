// Snippets are read as NGINX reads them: what NGINX takes for a word (`${`, `z}`, `\}`), a
// string or a comment never counts as a brace, Lua block bodies follow the Lua module's lexer,
// and a snippet that would leave its block or reach outside the Ingress is refused by line.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readSnippet, snippetProblem } from '../../../src/model/checks/snippet-check.js';

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

test.run();
