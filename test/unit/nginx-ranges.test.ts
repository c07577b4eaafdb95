// The validators agree with the real NGINX, class by class: for listed and seeded random values,
// what a check accepts (as it returns it) NGINX takes, and what it refuses NGINX refuses too,
// except the few values a check refuses on purpose (listed). Sizes, times, status codes per
// directive, limit_conn, proxy_buffers, regular expressions (PCRE2), cipher and curve lists.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import {
  errorPageCode, int, InvalidValue, limitStatusCode, offset, proxyBufferSize, proxyBuffersNumber, size, timeMsec, timeSec, type Check,
} from '../../src/model/checks/validate.js';
import { checkRegex } from '../../src/model/checks/pcre.js';
import { opensslAcceptsCiphers, opensslAcceptsCurves } from '../../src/model/checks/openssl.js';
import { ensureFallbackCertificate } from '../../src/render/fallback-cert.js';
import { quoteLiteral } from '../../src/render/filters.js';
import { createNginxOracle, type OracleSnippet } from '../support/nginx-oracle.js';
import { seededRandom } from '../support/random.js';

const oracle = createNginxOracle();
const certDir = mkdtempSync(join(tmpdir(), 'irx-oracle-cert-'));
const SEED = 15;

test.after(() => {
  oracle.close();
  rmSync(certDir, { recursive: true, force: true });
});

function verdict<T>(check: Check<T>, raw: string): { ok: true; value: T } | { ok: false } {
  try {
    return { ok: true, value: check(raw) };
  } catch (err) {
    if (err instanceof InvalidValue) return { ok: false };
    throw err;
  }
}

/**
 * Compares a check with NGINX: an accepted value, printed as the renderer prints it, passes
 * `nginx -t`; a refused one fails it as written, unless it is among `stricter`.
 */
async function agree<T>(name: string, check: Check<T>, values: string[], snippet: (printed: string) => OracleSnippet, opts: { stricter?: (raw: string) => boolean } = {}) {
  const cases = values.map((raw) => ({ raw, ours: verdict(check, raw) }));
  const results = await oracle.all(cases, (c) => snippet(c.ours.ok ? String(c.ours.value) : quoteLiteral(c.raw)));
  const wrong: string[] = [];
  for (const { item, ok, output } of results) {
    if (item.ours.ok && !ok) wrong.push(`${JSON.stringify(item.raw)}: we accept it, NGINX refuses: ${output.split('\n')[0]}`);
    if (!item.ours.ok && ok && !opts.stricter?.(item.raw)) wrong.push(`${JSON.stringify(item.raw)}: we refuse it, NGINX takes it`);
  }
  assert.equal(wrong, [], `${name}: ${wrong.length} disagreements`);
  assert.ok(cases.some((c) => c.ours.ok) && cases.some((c) => !c.ours.ok), `${name}: the values cover both verdicts`);
}

const r = seededRandom(SEED);
const digits = (n: number) => Array.from({ length: n }, (_, i) => (i === 0 ? r.int(1, 9) : r.int(0, 9))).join('');

test('sizes: size_t (k, m) and off_t (k, m, g), overflow at 2^63-1', async () => {
  const listed = ['0', '1', '8k', '8K', '1m', '1M', '2g', '2G', '1t', '1mb', '-1', 'm', '00012k', '9223372036854775807', '9223372036854775808',
    '9007199254740991k', '9007199254740992k', '8796093022207m', '8796093022208m', '8589934591g', '8589934592g', '999999999999g'];
  const random = Array.from({ length: 60 }, () => `${digits(r.int(1, 22))}${r.pick(['', 'k', 'K', 'm', 'M', 'g', 'G', 't'])}`);
  await agree('size_t', size, [...listed, ...random], (v) => ({ location: `client_body_buffer_size ${v};` }));
  await agree('off_t', offset, [...listed, ...random], (v) => ({ location: `client_max_body_size ${v};` }));
});

test('times: msec directives (no y or M, ms allowed) and sec directives (no ms), units in decreasing order', async () => {
  const listed = ['10s', '5m', '1h30m', '1h 30m', '500ms', '60', '1s1h', '1y', '2M', '1m1m', '1d12h', '1w1d1h1m1s1ms', '0', 's', '',
    '106751991167d', '106751991168d', '9223372036854775s', '9223372036854776s', '292471208y', '292471209y'];
  const units = ['y', 'M', 'w', 'd', 'h', 'm', 's', 'ms', ''];
  const random = Array.from({ length: 80 }, () => Array.from({ length: r.int(1, 3) }, () => `${digits(r.int(1, 4))}${r.pick(units)}`).join(r.bool(0.2) ? ' ' : ''));
  // NGINX reads "5 3" as 8 s: a number after a bare number; we refuse that on purpose.
  const bareThenMore = (raw: string) => /^\d+ +\d/.test(raw.trim());
  await agree('msec', timeMsec, [...listed, ...random], (v) => ({ location: `proxy_read_timeout ${v};` }), { stricter: bareThenMore });
  await agree('sec', timeSec, [...listed, ...random], (v) => ({ http: `ssl_session_timeout ${v};` }), { stricter: bareThenMore });
});

test('status codes per directive: error_page 300..599, limit_req_status/limit_conn_status 400..599', async () => {
  const codes = ['0', '99', '100', '200', '299', '300', '404', '499', '599', '600', '999', '-1', 'abc', ...Array.from({ length: 30 }, () => String(r.int(0, 700)))];
  await agree('error_page', errorPageCode, codes, (v) => ({ location: `error_page ${v} /x;` }));
  await agree('limit_req_status', limitStatusCode, codes, (v) => ({ http: `limit_req_status ${v};` }));
  await agree('limit_conn_status', limitStatusCode, codes, (v) => ({ http: `limit_conn_status ${v};` }));
});

test('ssl_session_cache shared zone: 32k (8 pages) to 1g; nginx -t maps the zone, so a larger one fails on memory', async () => {
  const { CONFIGMAP_KEYS } = await import('../../src/model/core/config/keys.js');
  const key = CONFIGMAP_KEYS.find((k) => k.key === 'ssl-session-cache-size');
  assert.ok(key && key.kind === 'value');
  const check = key.check as Check<string>;
  const sizes = ['0', '1k', '31k', '32k', '1m', '10m', '1024m', '1025m', '99999m'];
  // Between 1g and what this machine can map, NGINX takes it and we do not: on purpose.
  await agree('ssl_session_cache', check, sizes, (v) => ({ http: `ssl_session_cache shared:SSL:${v.replace(/"/g, '')};` }), { stricter: (raw) => raw === '1025m' });
});

test('limit_conn: 1..65535 (0 is "off" and not printed)', async () => {
  const connections = int(1, 65_535);
  const values = ['1', '65535', '65536', '70000', '100000', ...Array.from({ length: 20 }, () => String(r.int(1, 200_000)))];
  await agree('limit_conn', connections, values, (v) => ({ http: 'limit_conn_zone $binary_remote_addr zone=z:1m;', location: `limit_conn z ${v};` }));
});

test('proxy_buffers N S with proxy_buffer_size S: N at least 3, S from 1 byte to 1g', async () => {
  const pairs = [...['0', '1', '2', '3', '4', '1024'].map((n) => `${n} 4k`), ...['0', '1', '512', '1m', '1024m', '1025m', '2g'].map((s) => `8 ${s}`)];
  const both: Check<string> = (raw) => {
    const [n, s] = raw.split(' ');
    return `${proxyBuffersNumber(n!)} ${proxyBufferSize(s!)}`;
  };
  await agree('proxy_buffers', both, pairs, (v) => {
    const [n, s] = v.replace(/"/g, '').split(' ');
    return { location: `proxy_buffer_size ${s}; proxy_buffers ${n} ${s};` };
  });
});

/** Regular-expression pieces JavaScript and PCRE2 read differently, and plain ones. */
const REGEX_PIECES = ['a', '/', '\\w', '-', '.', '[', ']', '(', ')', '?', '<', '=', '!', '+', '*', '{2}', '|', '^', '$', '\\u0041', '\\x41',
  '(?P<n>', '(?<n>', '\\d', '\\Q', '\\E', '(?i)', '\\p{L}', '[\\w-.]', '(?<=a+)', '(?<=ab)', 'a++', '\\k<n>', '(?#c)', '\\', '{', '}'];

test('regular expressions: checkRegex answers as NGINX\'s PCRE2 does, case-sensitive and ~*', async () => {
  const listed = ['^/api/(v1|v2', '^/(?P<n>a)', '^/a++', '^/[\\w-.]+', '^/(?<=a+)b', '^/\\u0041', '^/api/v[0-9]+/(.*)', '^/(?i)x', '^/(?<host>a)'];
  const random = Array.from({ length: 150 }, () => `^/${Array.from({ length: r.int(1, 6) }, () => r.pick(REGEX_PIECES)).join('')}`);
  const wrong: string[] = [];
  for (const caseless of [true, false]) {
    const results = await oracle.all([...listed, ...random], (p) => ({ server: `location ${caseless ? '~*' : '~'} ${quoteLiteral(p)} { return 200; }` }));
    for (const { item, ok, output } of results) {
      const ours = checkRegex(item, { caseless });
      // Named groups become variables; a name NGINX already has fails for another reason than PCRE.
      const duplicateVariable = /duplicate ".*" variable/.test(output);
      if (ours.ok !== ok && !duplicateVariable) wrong.push(`${JSON.stringify(item)} (${caseless ? '~*' : '~'}): ours ${ours.ok}, NGINX ${ok} ${output.split('\n')[0]}`);
    }
  }
  assert.equal(wrong, []);
});

test('cipher and curve lists: the local OpenSSL answers as NGINX does', async () => {
  const cert = await ensureFallbackCertificate(certDir);
  const ssl = (directive: string) => ({ server: `listen 127.0.0.1:2 ssl; ssl_certificate ${cert.certPath}; ssl_certificate_key ${cert.keyPath}; ${directive}` });
  const ciphers = ['NOPE', 'HIGH', 'HIGH:!aNULL:!MD5', 'ECDHE-RSA-AES128-GCM-SHA256', 'TLS_AES_128_GCM_SHA256', 'DEFAULT', 'ALL:!ALL', 'RC4', 'ECDHE-ECDSA-AES128-GCM-SHA256:NOPE'];
  const curves = ['nope', 'auto', 'X25519', 'prime256v1', 'secp384r1:X25519', 'X448', 'P-256', 'X25519:nope', 'secp521r1'];
  const wrong: string[] = [];
  for (const { item, ok } of await oracle.all(ciphers, (c) => ssl(`ssl_ciphers ${quoteLiteral(c)};`))) {
    if (opensslAcceptsCiphers(item) !== ok) wrong.push(`ssl_ciphers ${item}: ours ${!ok}, NGINX ${ok}`);
  }
  for (const { item, ok } of await oracle.all(curves, (c) => ssl(`ssl_ecdh_curve ${quoteLiteral(c)};`))) {
    if (opensslAcceptsCurves(item) !== ok) wrong.push(`ssl_ecdh_curve ${item}: ours ${!ok}, NGINX ${ok}`);
  }
  assert.equal(wrong, []);
});

test.run();
