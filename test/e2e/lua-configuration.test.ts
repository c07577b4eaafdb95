// The HTTP contract of the Lua configuration endpoint on the control server, against real NGINX.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startLuaNginx, backend, generateCertificate, type LuaNginx } from '../support/lua-nginx.js';
import { join } from 'node:path';

const test = suite('lua /configuration');
let nginx: LuaNginx;

test.before(async () => { nginx = await startLuaNginx({ workers: 2 }); });
test.after(async () => { await nginx?.stop(); });

test('is-dynamic-lb-initialized is 404 before backends are posted, 200 after', async () => {
  assert.is((await nginx.status('GET', '/is-dynamic-lb-initialized')).status, 404);
  assert.is((await nginx.status('GET', '/configuration/backends')).status, 404);
  const payload = [backend('ns-svc-80', [{ address: '127.0.0.2', port: '8080' }])];
  const posted = await nginx.status('POST', '/configuration/backends', JSON.stringify(payload));
  assert.is(posted.status, 201);
  assert.is((await nginx.status('GET', '/is-dynamic-lb-initialized')).status, 200);
});

test('GET /configuration/backends returns the posted body as it was', async () => {
  const body = JSON.stringify([backend('a-b-80', [{ address: '127.0.0.9', port: '1' }]), backend('c-d-80', [])]);
  assert.is((await nginx.status('POST', '/configuration/backends', body)).status, 201);
  const got = await nginx.status('GET', '/configuration/backends');
  assert.is(got.status, 200);
  assert.is(got.body, body);
});

test('backends must be a JSON array; invalid JSON and empty bodies are 400 with a message', async () => {
  const before = (await nginx.status('GET', '/configuration/backends')).body;
  for (const bad of ['{"not":"array"}', '[{"name":', 'null', '']) {
    const r = await nginx.status('POST', '/configuration/backends', bad);
    assert.is(r.status, 400, `body ${JSON.stringify(bad)}`);
    assert.match(r.body, /backends: /);
  }
  assert.is((await nginx.status('GET', '/configuration/backends')).body, before, 'a rejected POST keeps the stored backends');
  assert.is((await nginx.status('POST', '/configuration/backends', '[]')).status, 201, 'an empty array is valid');
});

test('backends of a shape the controller never sends are 400 with the problem; the stored list stays', async () => {
  const good = JSON.stringify([backend('ok-svc-80', [{ address: '10.0.0.1', port: '80' }]), backend('upstream-default-backend', [], { service: null })]);
  assert.is((await nginx.status('POST', '/configuration/backends', good)).status, 201, 'service null is what the controller sends');
  const ep = (e: unknown) => JSON.stringify([{ name: 'a', endpoints: [e] }]);
  const bad: Array<[string, RegExp]> = [
    ['[1,"x",null,{"name":5}]', /\[0\] must be a JSON object/],
    ['[{"name":5}]', /\[0\]\.name must be a non-empty string/],
    ['[{"name":""}]', /name must be a non-empty string/],
    ['[{"name":"a","endpoints":"x"}]', /\(a\)\.endpoints must be a JSON array/],
    ['[{"name":"a","endpoints":{"x":1}}]', /endpoints must be a JSON array/],
    [ep(5), /endpoints\[0\] must be a JSON object/],
    [ep({ address: 5, port: '80' }), /endpoints\[0\]\.address/],
    [ep({ address: '', port: '80' }), /endpoints\[0\]\.address/],
    [ep({ address: '10.0.0.1', port: '0' }), /port must be a port number/],
    [ep({ address: '10.0.0.1', port: '99999' }), /port must be a port number/],
    [ep({ address: '10.0.0.1', port: '0x50' }), /port must be a port number/],
    [ep({ address: '10.0.0.1', port: 80.5 }), /port must be a port number/],
    [ep({ address: '10.0.0.1' }), /port must be a port number/],
    ['[{"name":"a"},{"name":"a"}]', /backend a appears twice/],
    ['[{"name":"a","alternativeBackends":[1]}]', /alternativeBackends\[0\] must be a string/],
    ['[{"name":"a","alternativeBackends":"b"}]', /alternativeBackends must be a JSON array/],
    ['[{"name":"a","trafficShapingPolicy":{"weight":"100"}}]', /trafficShapingPolicy\.weight/],
    ['[{"name":"a","trafficShapingPolicy":{"weight":-1}}]', /trafficShapingPolicy\.weight/],
    ['[{"name":"a","trafficShapingPolicy":{"header":5}}]', /trafficShapingPolicy\.header must be a string/],
    ['[{"name":"a","service":"x"}]', /service must be a JSON object or null/],
    ['[{"name":"a","service":{"spec":{"type":5}}}]', /service\.spec\.type must be a string/],
    ['[{"name":"a","sessionAffinityConfig":[1]}]', /sessionAffinityConfig must be a JSON object/],
    ['[{"name":"a","upstreamHashByConfig":"x"}]', /upstreamHashByConfig must be a JSON object/],
    ['[{"name":"a","sslPassthrough":"yes"}]', /sslPassthrough must be true or false/],
    ['[{"name":"a","load-balance":1}]', /load-balance must be a string/],
  ];
  for (const [body, message] of bad) {
    const r = await nginx.status('POST', '/configuration/backends', body);
    assert.is(r.status, 400, body);
    assert.match(r.body, /^backends: /, body);
    assert.match(r.body, message, `${body}: ${r.body}`);
  }
  assert.is((await nginx.status('GET', '/configuration/backends')).body, good, 'every refused POST kept the stored backends');
});

test('general: POST a JSON object then GET it back; non-objects are 400', async () => {
  assert.is((await nginx.status('GET', '/configuration/general')).status, 404);
  const body = '{"controllerPodsCount":1}';
  assert.is((await nginx.status('POST', '/configuration/general', body)).status, 201);
  const got = await nginx.status('GET', '/configuration/general');
  assert.is(got.status, 200);
  assert.is(got.body, body);
  assert.is((await nginx.status('POST', '/configuration/general', '[1,2]')).status, 400);
  assert.is((await nginx.status('POST', '/configuration/general', 'nope')).status, 400);
  for (const bad of ['{"controllerPodsCount":-1}', '{"controllerPodsCount":"2"}', '{"x":{"nested":1}}', '{"x":[1]}']) {
    const r = await nginx.status('POST', '/configuration/general', bad);
    assert.is(r.status, 400, bad);
    assert.match(r.body, /^general: /);
  }
  assert.is((await nginx.status('GET', '/configuration/general')).body, body);
});

test('servers: certificates by uid and hostnames; certs?hostname= serves the PEM; uid -1 removes', async () => {
  const cert = await generateCertificate(join(nginx.prefix, 'certs'), 'conf.test');
  const r = await nginx.status('POST', '/configuration/servers', JSON.stringify({
    certificates: { 'uid-1': cert.pem }, servers: { 'conf.test': 'uid-1', '*.wild.test': 'uid-1' },
  }));
  assert.is(r.status, 201);
  const got = await nginx.status('GET', '/configuration/certs?hostname=conf.test');
  assert.is(got.status, 200);
  assert.is(got.body, cert.pem);
  assert.is((await nginx.status('GET', '/configuration/certs?hostname=CONF.test.')).body, cert.pem, 'case and trailing dot');
  assert.is((await nginx.status('GET', '/configuration/certs?hostname=x.wild.test')).body, cert.pem, 'wildcard');
  assert.is((await nginx.status('GET', '/configuration/certs?hostname=other.test')).status, 404);
  assert.is((await nginx.status('GET', '/configuration/certs')).status, 400, 'hostname is required');
  assert.is((await nginx.status('POST', '/configuration/certs?hostname=conf.test', '{}')).status, 400, 'certs is GET only');

  assert.is((await nginx.status('POST', '/configuration/servers', JSON.stringify({ servers: { 'conf.test': '-1' } }))).status, 201);
  assert.is((await nginx.status('GET', '/configuration/certs?hostname=conf.test')).status, 404);
});

test('servers: malformed payloads are 400; nothing of a refused payload is stored', async () => {
  const cert = await generateCertificate(join(nginx.prefix, 'certs'), 'shape.test');
  for (const bad of ['[]', '{"servers": {"a.test": 5}}', '{"certificates": {"u": 1}}', '{"servers": "x"}', '{',
    JSON.stringify({ certificates: { u: 'not a pem' }, servers: { 'shape.test': 'u' } }),
    JSON.stringify({ certificates: { u: cert.pem.split('-----BEGIN PRIVATE')[0] }, servers: { 'shape.test': 'u' } }),
    JSON.stringify({ certificates: {}, servers: { 'shape.test': 'nowhere' } }),
    JSON.stringify({ certificates: { u: cert.pem }, servers: { 'shape test': 'u' } }),
    JSON.stringify({ certificates: { '-1': cert.pem }, servers: {} }),
    // `complete` forgets every host not named: only a real boolean may say so.
    JSON.stringify({ certificates: { u: cert.pem }, servers: { 'shape.test': 'u' }, complete: 'yes' })]) {
    const r = await nginx.status('POST', '/configuration/servers', bad);
    assert.is(r.status, 400, bad);
    assert.match(r.body, /^servers: /);
  }
  assert.is((await nginx.status('GET', '/configuration/certs?hostname=shape.test')).status, 404, 'a refused payload stored nothing');
  assert.is((await nginx.status('GET', '/configuration/servers')).status, 400, 'servers is POST only');
});

test('servers: a Gateway listener table (frontends) of a shape the controller never sends is 400; nothing is stored', async () => {
  const cert = await generateCertificate(join(nginx.prefix, 'certs'), 'frontends.test');
  const base = { certificates: { f: cert.pem }, servers: { 'frontends.test': 'f' } };
  for (const frontends of [
    'x', [], { names: ['a.test'], policies: [] }, { names: { 'a.test': 0 }, policies: [] }, { names: { 'a.test': -2 }, policies: [null] },
    { names: { 'a.test': 0.5 }, policies: [null] }, { names: { 'a b.test': 0 }, policies: [null] }, { names: { 'a.test': 0 }, policies: [{ ca: null }] },
    { names: { 'a.test': 0 }, policies: [{ ca: 'ssl_verify_client off;', insecure: false }] }, { names: {}, policies: [null], tlsOnly: ['bad\r\nhost'] },
  ]) {
    const r = await nginx.status('POST', '/configuration/servers', JSON.stringify({ ...base, frontends }));
    assert.is(r.status, 400, JSON.stringify(frontends));
    assert.match(r.body, /^servers: frontends/);
  }
  assert.is((await nginx.status('GET', '/configuration/certs?hostname=frontends.test')).status, 404, 'a refused payload stored nothing');
  const ok = await nginx.status('POST', '/configuration/servers', JSON.stringify({ ...base, frontends: { names: { '': 0, 'a.test': -1 }, policies: [{ ca: null, insecure: false }], tlsOnly: [] } }));
  assert.is(ok.status, 201, ok.body);
});

test('other methods are 400, unknown paths 404', async () => {
  assert.is((await nginx.status('PUT', '/configuration/backends', '[]')).status, 400);
  assert.is((await nginx.status('DELETE', '/configuration/general')).status, 400);
  assert.is((await nginx.status('GET', '/configuration/unknown')).status, 404);
  assert.is((await nginx.status('POST', '/configuration/backends/extra', '[]')).status, 404);
});

test('a body larger than the shared dict is refused with 413 and a message; the previous backends stay', async () => {
  const small = JSON.stringify([backend('keep-me-80', [])]);
  assert.is((await nginx.status('POST', '/configuration/backends', small)).status, 201);
  const filler = 'x'.repeat(20.5 * 1024 * 1024);
  const huge = JSON.stringify([{ name: 'huge', endpoints: [], filler }]);
  const r = await nginx.status('POST', '/configuration/backends', huge);
  assert.is(r.status, 413);
  assert.match(r.body, /configuration_data/);
  assert.is((await nginx.status('GET', '/configuration/backends')).body, small);
  const tooBig = await nginx.status('POST', '/configuration/backends', 'x'.repeat(22 * 1024 * 1024));
  assert.is(tooBig.status, 413, 'above client_max_body_size NGINX itself answers 413');
});

test('a large valid payload (5,000 backends) is accepted', async () => {
  const many = Array.from({ length: 5000 }, (_, i) => backend(`ns-svc${i}-80`, [{ address: `10.0.${i >> 8}.${i & 255}`, port: '8080' }]));
  const body = JSON.stringify(many);
  assert.ok(body.length > 2_000_000);
  assert.is((await nginx.status('POST', '/configuration/backends', body)).status, 201);
  assert.is((await nginx.status('GET', '/configuration/backends')).body.length, body.length);
});

test.run();
