// Tests for the shared validators in src/model/checks/validate.ts (used by annotation and ConfigMap
// parsers): each accepts what NGINX and ingress-nginx accept and nothing that can break a config.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  blockedWord, bool, cidr, cookieDomain, cookieName, cookiePath, headerName, hostname, httpMethod, int, InvalidValue,
  nextUpstream, offset, safeRegex, timeMsec, timeSec, safeString, safeStringWithVariables, size, sortedUnique, uriPath, url, type Check,
} from '../../../src/model/checks/validate.js';

function accepts<T>(check: Check<T>, cases: Array<[string, T]>) {
  for (const [raw, want] of cases) assert.equal(check(raw), want, `should accept ${JSON.stringify(raw)}`);
}
function rejects(check: Check<unknown>, raws: string[]) {
  for (const raw of raws) assert.throws(() => check(raw), (e: unknown) => e instanceof InvalidValue, `should reject ${JSON.stringify(raw)}`);
}

test('bool: Go ParseBool words', () => {
  accepts(bool, [['true', true], ['True', true], ['1', true], ['t', true], ['false', false], ['F', false], ['0', false], [' true ', true]]);
  rejects(bool, ['yes', 'on', '', 'truee', 'true;']);
});

test('int: digits within range', () => {
  accepts(int(0, 10), [['0', 0], ['10', 10], [' 7 ', 7]]);
  rejects(int(0, 10), ['11', '-1', '1.5', '1e3', '0x10', '', '5s', '9'.repeat(30)]);
});

test('size and offset: NGINX sizes (size_t without g, off_t with g, at most 2^63-1 bytes)', () => {
  accepts(size, [['0', '0'], ['1m', '1m'], ['8K', '8K'], ['512', '512']]);
  rejects(size, ['2g', '1t', '1 m', '1mb', '-1', 'm', '1m;', '', '9999999999999999m']);
  accepts(offset, [['0', '0'], ['2g', '2g'], ['8589934591g', '8589934591g']]);
  rejects(offset, ['8589934592g', '999999999999g', '1t']);
});

test('timeMsec and timeSec: NGINX times, units in decreasing order', () => {
  accepts(timeMsec, [['10s', '10s'], ['5m', '5m'], ['1h30m', '1h30m'], ['1h 30m', '1h30m'], ['500ms', '500ms'], ['60', '60']]);
  rejects(timeMsec, ['ten', '1 h', '5x', '', '5m;', '1s1h', '1y', '2M', '1m1m']);
  accepts(timeSec, [['1y', '1y'], ['2M1d', '2M1d'], ['5m', '5m']]);
  rejects(timeSec, ['500ms', '1s1h']);
});

test('headerName: letters, digits and dashes', () => {
  accepts(headerName, [['X-Forwarded-For', 'X-Forwarded-For'], ['x1', 'x1']]);
  rejects(headerName, ['X_Under', 'X Space', 'X:Colon', '', 'X\r\nY', 'a'.repeat(300)]);
});

test('cidr: IPv4/IPv6 addresses and networks', () => {
  accepts(cidr, [['10.0.0.0/8', '10.0.0.0/8'], ['192.168.1.1', '192.168.1.1'], ['::1', '::1'], ['2001:db8::/32', '2001:db8::/32'], ['10.0.0.0/08', '10.0.0.0/8']]);
  rejects(cidr, ['10.0.0.0/33', '::/129', '10.0.0', 'example.com', '10.0.0.0/8/8', '10.0.0.0/x', '1.2.3.4;', '']);
});

test('url: http(s) only, NGINX variables allowed, no breaking characters', () => {
  const http = url(['http', 'https']);
  accepts(http, [
    ['https://auth.example.com/check', 'https://auth.example.com/check'],
    ['http://10.0.0.1:8080/x?a=1&b=2', 'http://10.0.0.1:8080/x?a=1&b=2'],
    ['https://$host/start?rd=$escaped_request_uri', 'https://$host/start?rd=$escaped_request_uri'],
  ]);
  rejects(http, ['ftp://a.com/', 'javascript:alert(1)', 'file:///etc/passwd', '/relative', 'http://a.com/x;y', 'http://a.com/"', 'http://a.com/{x}',
    'http://a.com/ x', 'http://a.com/\\', 'http://a.com/$', 'http://a.com/${x}', "http://a.com/'", 'http://']);
});

test('hostname: DNS names, optional wildcard and port', () => {
  accepts(hostname(), [['Example.COM', 'example.com'], ['a-b.c', 'a-b.c']]);
  accepts(hostname({ wildcard: true }), [['*.example.com', '*.example.com']]);
  accepts(hostname({ port: true }), [['a.com:8080', 'a.com:8080']]);
  rejects(hostname(), ['*.a.com', 'a_b.com', '-a.com', 'a..com', 'a.com:80', '', 'a'.repeat(300)]);
});

test('cookie name, path and domain', () => {
  accepts(cookieName, [['INGRESSCOOKIE', 'INGRESSCOOKIE'], ['my_cookie-1', 'my_cookie-1']]);
  rejects(cookieName, ['a b', 'a;b', 'a=b', 'a"b', "a'b", 'a$b', '']);
  accepts(cookiePath, [['/', '/'], ['/app/v1', '/app/v1']]);
  rejects(cookiePath, ['app', '/a;b', '/a b', '/a"b']);
  accepts(cookieDomain, [['.example.com', '.example.com'], ['example.com', 'example.com']]);
  rejects(cookieDomain, ['exa mple.com', 'a;b.com', '']);
});

test('uriPath: absolute paths without breaking characters', () => {
  accepts(uriPath, [['/app', '/app'], ['/.well-known/acme-challenge', '/.well-known/acme-challenge']]);
  rejects(uriPath, ['app', '/a b', '/a;b', '/a$b', '/a{b']);
});

test('safeString and safeStringWithVariables', () => {
  accepts(safeString, [['plain text, with (parens) & stuff', 'plain text, with (parens) & stuff']]);
  rejects(safeString, ['a;b', 'a"b', "a'b", 'a{b', 'a}b', 'a\\b', 'a$b', 'a\nb', 'a\u0000b', 'a'.repeat(5000)]);
  // `${name}` is a variable as ingress-nginx's validators accept it; a brace anywhere else is not.
  accepts(safeStringWithVariables, [['$remote_addr-$host', '$remote_addr-$host'], ['${request_uri}$host', '${request_uri}$host']]);
  rejects(safeStringWithVariables, ['$', '${', '${1}', '${host', 'a{b}', '$1', 'a;$b', '${host};']);
});

test('safeRegex: compiles, no NGINX-breaking characters, no lone trailing backslash', () => {
  accepts(safeRegex, [['^v[23]$', '^v[23]$'], ['a\\.b', 'a\\.b'], ['a\\\\', 'a\\\\']]);
  rejects(safeRegex, ['(a', 'a{2}', 'a"b', 'a;b', 'a\\', 'a\nb']);
});

test('httpMethod and nextUpstream', () => {
  accepts(httpMethod, [['get', 'GET'], ['DELETE', 'DELETE']]);
  rejects(httpMethod, ['FETCH', 'GET;', '']);
  accepts(nextUpstream, [['error timeout', ['error', 'timeout']], ['http_502  non_idempotent', ['http_502', 'non_idempotent']]]);
  rejects(nextUpstream, ['', 'error always', 'error;']);
});

test('blockedWord is case-insensitive and ignores empty words', () => {
  assert.is(blockedWord('/LOCATION/x', ['location']), 'location');
  assert.is(blockedWord('/app', ['', 'root']), undefined);
});

test('sortedUnique', () => {
  assert.equal(sortedUnique(['b', 'a', 'b']), ['a', 'b']);
});

test.run();
