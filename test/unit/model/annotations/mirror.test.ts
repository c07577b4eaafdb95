// Tests for the mirror group: the target read as NGINX would dial it, judged by the upstream
// address policy, and every hostile spelling refused with mirroring off (never the routes).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AddressPolicy } from '../../../../src/model/checks/address-policy.js';
import { parseAnnotations } from '../../../../src/model/ingress/annotations/index.js';
import { defaultSettings } from '../../../../src/model/core/config/parse.js';
import type { Ingress } from '../../../../src/store/kube-types.js';
import type { StoreReader } from '../../../../src/store/types.js';
import { HOSTILE_VALUES } from '../../../support/hostile.js';

const P = 'nginx.ingress.kubernetes.io';
const store = { getSecret: () => undefined, getService: () => undefined, getConfigMap: () => undefined } as unknown as StoreReader;

function parse(ann: Record<string, string>, addressPolicy?: AddressPolicy) {
  const ing: Ingress = {
    metadata: { name: 'web', namespace: 'shop', annotations: Object.fromEntries(Object.entries(ann).map(([k, v]) => [`${P}/${k}`, v])) },
    spec: {},
  };
  return parseAnnotations(ing, { prefix: P, settings: defaultSettings(), store, ...(addressPolicy ? { addressPolicy } : {}) });
}
const warned = (ws: { field: string }[]) => [...new Set(ws.map((w) => w.field.replace(`metadata.annotations["${P}/`, '').replace('"]', '')))].sort();

test('mirror-target with a path, mirror-host and mirror-request-body off', () => {
  const { value, warnings } = parse({ 'mirror-target': 'https://Mirror.Example.com:8443/copy$request_uri', 'mirror-host': 'shadow.example.com', 'mirror-request-body': 'off' });
  assert.equal(warnings, []);
  assert.equal(value.mirror, { scheme: 'https', host: 'mirror.example.com', port: 8443, uri: '/copy$request_uri', hostHeader: 'shadow.example.com', requestBody: false });
});

test('mirror-target defaults: the request URI, the target host as Host, the body copied', () => {
  const { value } = parse({ 'mirror-target': 'http://10.0.0.7' });
  assert.equal(value.mirror, { scheme: 'http', host: '10.0.0.7', port: 80, uri: '$request_uri', hostHeader: '10.0.0.7', requestBody: true });
  const v6 = parse({ 'mirror-target': 'http://[2001:db8::1]:81/x' }).value.mirror;
  assert.equal([v6?.host, v6?.port, v6?.hostHeader], ['2001:db8::1', 81, '[2001:db8::1]']);
  const own = parse({ 'mirror-target': 'https://$host/shadow${request_uri}' }).value.mirror;
  assert.equal([own?.host, own?.hostHeader, own?.uri], ['$host', '$host', '/shadow${request_uri}']);
});

const refused: Array<{ name: string; target: string; reason: RegExp }> = [
  { name: 'a unix socket', target: 'http://unix:/var/run/docker.sock:/containers/json', reason: /unix socket/ },
  { name: 'a unix socket (upper case)', target: 'HTTP://UNIX:/run/ingress-rx/control.sock:/', reason: /unix socket/ },
  { name: 'loopback', target: 'http://127.0.0.1:10246/', reason: /loopback/ },
  { name: 'loopback in another spelling', target: 'http://0x7f.1/', reason: /loopback/ },
  { name: 'localhost', target: 'http://localhost:8080/', reason: /loopback/ },
  { name: 'the metadata service', target: 'http://169.254.169.254/latest/meta-data/', reason: /metadata/ },
  { name: 'IPv6 loopback', target: 'http://[::1]/', reason: /loopback/ },
  { name: 'the unspecified address', target: 'http://0.0.0.0:10254/', reason: /unspecified/ },
  { name: 'another variable as host', target: 'http://$http_x_target/', reason: /not an http\(s\) URL/ },
  { name: 'a semicolon (directive injection)', target: 'http://m.example.com/;proxy_pass http://evil', reason: /mirror-target|characters|unsafe|;/ },
  { name: 'a quote', target: 'http://m.example.com/"x', reason: /./ },
  { name: 'a newline', target: 'http://m.example.com/\nreturn 200;', reason: /./ },
  { name: 'braces', target: 'http://m.example.com/{x}', reason: /./ },
  { name: 'another scheme', target: 'ftp://m.example.com/', reason: /not an http/ },
  { name: 'a port out of range', target: 'http://m.example.com:70000/', reason: /port/ },
  { name: 'user info', target: 'http://user@m.example.com/', reason: /not a valid host name/ },
];
for (const r of refused) {
  test(`mirror-target refused (mirroring off, routes kept): ${r.name}`, () => {
    const { value, warnings } = parse({ 'mirror-target': r.target });
    assert.is(value.mirror, null);
    assert.is(value.denied, null);
    assert.equal(warned(warnings), ['mirror-target']);
    assert.match(warnings[0]!.message, r.reason);
  });
}

test('the address policy decides: loopback allowed (local mode) except the controller ports', () => {
  const local: AddressPolicy = { allow: new Set(['loopback']), ownPorts: new Set([10246, 10254]) };
  assert.is(parse({ 'mirror-target': 'http://127.0.0.1:9000/' }, local).value.mirror?.host, '127.0.0.1');
  const own = parse({ 'mirror-target': 'http://127.0.0.1:10254/' }, local);
  assert.is(own.value.mirror, null);
  assert.match(own.warnings[0]!.message, /own listeners/);
  assert.is(parse({ 'mirror-target': 'http://169.254.169.254/' }, local).value.mirror, null);
});

test('invalid mirror-host and mirror-request-body fall back with warnings; without a target they warn', () => {
  const { value, warnings } = parse({ 'mirror-target': 'http://m.example.com/', 'mirror-host': 'a b;', 'mirror-request-body': 'maybe' });
  assert.equal([value.mirror?.hostHeader, value.mirror?.requestBody], ['m.example.com', true]);
  assert.equal(warned(warnings), ['mirror-host', 'mirror-request-body']);
  const alone = parse({ 'mirror-host': 'x.example.com' });
  assert.is(alone.value.mirror, null);
  assert.equal(warned(alone.warnings), ['mirror-host']);
});

test('no hostile value reaches the mirror configuration', () => {
  for (const h of HOSTILE_VALUES) {
    for (const [key, prefix] of [['mirror-target', 'http://m.example.com/'], ['mirror-host', ''], ['mirror-target', '']] as const) {
      const ann: Record<string, string> = key === 'mirror-host' ? { 'mirror-target': 'http://m.example.com/', 'mirror-host': `m.example.com${h.value}` } : { [key]: `${prefix}${h.value}` };
      const m = parse(ann).value.mirror;
      if (!m) continue;
      for (const s of [m.host, m.uri, m.hostHeader]) {
        // `${name}` is NGINX's own spelling of a variable; any other brace is refused.
        assert.not.match(s.replace(/\$\{[A-Za-z0-9_]+\}/g, ''), /[\s;"'{}\\\u0000-\u001f]/, `${key} ← ${h.name}: ${JSON.stringify(s.slice(0, 60))}`);
      }
    }
  }
});

test.run();
