// The escaping filters: each validates and escapes what it prints in one NGINX context, or
// refuses it naming the field.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as f from '../../../src/render/filters.js';

const filters = suite('render filters');

filters('quote escapes quotes and backslashes and makes $ literal', () => {
  assert.is(f.quote('a"b\\c'), '"a\\"b\\\\c"');
  assert.is(f.quote('$host'), '"${literal_dollar}host"');
  assert.throws(() => f.quote('a\nb', 'upstream-vhost'), /upstream-vhost: control characters/);
  assert.throws(() => f.quote('x'.repeat(5000), 'f'), /f: longer than/);
});

filters('quoteWithVariables keeps allowed variables and captures only', () => {
  assert.is(f.quoteWithVariables('/$1/$host/${http_x_a}'), '"/$1/$host/${http_x_a}"');
  assert.is(f.quoteWithVariables('$request_body'), '"${literal_dollar}request_body"');
  assert.is(f.quoteWithVariables('a$'), '"a${literal_dollar}"');
  assert.is(f.quoteWithVariables('/$1abc/$2'), '"/$1abc/$2"');
  assert.is(f.quoteWithVariables('$_x'), '"${literal_dollar}_x"');
});

filters('url validates scheme and characters', () => {
  assert.is(f.url('https://a.example.com/x?y=$host'), '"https://a.example.com/x?y=$host"');
  assert.throws(() => f.url('javascript:alert(1)', 'auth-url'), /auth-url: not an absolute/);
  assert.throws(() => f.url('http://a/"; return 200', 'auth-url'), /auth-url/);
  assert.throws(() => f.url('http://unix:/run/control.sock:/configuration/certs', 'auth-url'), /auth-url: a URL naming a unix socket/);
  assert.throws(() => f.url('https://Unix:/x.sock:/', 'auth-url'), /unix socket/);
  assert.is(f.url('http://unix.example.com/'), '"http://unix.example.com/"', 'a host that only starts with unix is a host');
  assert.throws(() => f.url('http://a/ b', 'auth-url'), /auth-url/);
});

filters('regex quotes braces and keeps escapes after NGINX unescaping', () => {
  assert.is(f.regex('^/a/[0-9]{3}\\.x$'), '"^/a/[0-9]{3}\\\\.x$"');
  assert.throws(() => f.regex('(', 'path'), /path: not a regular expression NGINX accepts/);
  assert.throws(() => f.regex('a b', 'path'), /white space/);
});

filters('map patterns keep spaces, as ingress-nginx\'s escaped `\\ ` (block-user-agents of its e2e suite)', () => {
  assert.is(f.mapPattern(String.raw`~*chrome\/68\.0\ safari`), String.raw`"~*chrome\\/68\\.0\\ safari"`);
  assert.is(f.mapPattern('Mozilla 4.0'), '"Mozilla 4.0"');
  assert.throws(() => f.mapPattern('~*(unclosed', 'block-user-agents'), /block-user-agents: not a regular expression/);
});

filters('header name, size, duration, number, on/off, cidr, host', () => {
  assert.is(f.headerName('X-Foo_1'), 'X-Foo_1');
  assert.throws(() => f.headerName('X-Foo: 1', 'h'), /h: not a valid header name/);
  assert.is(f.size('8k'), '8k');
  assert.throws(() => f.size('8k;', 's'), /s: not an NGINX size/);
  assert.is(f.duration(5), '5s');
  assert.is(f.duration('1h30m'), '1h30m');
  assert.throws(() => f.duration('5 s', 'd'), /d: not an NGINX duration/);
  assert.is(f.num(3), '3');
  assert.throws(() => f.num(-1, 'n'), /n: not a non-negative integer/);
  assert.throws(() => f.num(1.5, 'n'), /n:/);
  assert.is(f.onoff(true), 'on');
  assert.throws(() => f.onoff('yes', 'b'), /b: not a boolean/);
  assert.is(f.cidr('10.0.0.0/8'), '10.0.0.0/8');
  assert.is(f.cidr('fd00::/8'), 'fd00::/8');
  assert.throws(() => f.cidr('10.0.0.0/33', 'c'), /c: not an IP/);
  assert.throws(() => f.cidr('10.0.0.0/8; allow all', 'c'), /c: not an IP/);
  assert.is(f.host('*.Example.com'), '*.example.com');
  assert.throws(() => f.host('a b', 'host'), /host: not a valid host name/);
});

filters('Lua string literal escapes everything outside a safe set', () => {
  assert.is(f.luaString('abc-1.2/x'), '"abc-1.2/x"');
  assert.is(f.luaString('a"}\n'), '"a\\034\\125\\010"');
  assert.is(f.luaString('é'), '"\\195\\169"');
});

filters('snippet is read as NGINX reads it: no leaving its block, no reaching outside', () => {
  assert.is(f.snippet('more_set_headers "a: {";'), 'more_set_headers "a: {";');
  assert.throws(() => f.snippet('} server {', 'server-snippet'), /server-snippet: line 1: closes a block it did not open/);
  assert.throws(() => f.snippet('location / {', 'server-snippet'), /server-snippet: line 1: leaves a block open/);
  assert.throws(() => f.snippet('set $a ${${;\n} }\nserver { location /y {\nset $b z}z};', 'configuration-snippet'), /configuration-snippet: line 2: closes a block/);
  assert.throws(() => f.snippet('include /etc/passwd;', 'server-snippet'), /"include" reads another file/);
});

filters.run();
