// The standard proxy headers read $this_host, $scheme and $remote_addr directly
// when the ingress-nginx maps would only pass them on, and the maps when they can differ.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultSettings } from '../../../src/model/core/config/defaults.js';
import { headerVariables, passPortSource, standardHeaders } from '../../../src/render/proxy-headers.js';

const MAPS = { host: '$best_http_host', port: '$pass_port', scheme: '$pass_access_scheme', forwardedFor: '$full_x_forwarded_for' };

test('by default the headers read the variables the maps equal', () => {
  const s = defaultSettings();
  assert.equal(headerVariables(s), { host: '$this_host', port: '$pass_port', scheme: '$scheme', forwardedFor: '$remote_addr' });
  const text = standardHeaders(s, 'proxy_set_header').join('\n');
  for (const line of ['Host $this_host', 'X-Forwarded-For $remote_addr', 'X-Forwarded-Host $this_host', 'X-Forwarded-Port $pass_port', 'X-Forwarded-Proto $scheme', 'X-Scheme $scheme']) {
    assert.ok(text.includes(`proxy_set_header ${line}`), line);
  }
});

test('use-forwarded-headers and use-proxy-protocol: the maps, which then read X-Forwarded-* or the PROXY header', () => {
  assert.equal(headerVariables({ ...defaultSettings(), useForwardedHeaders: true }), MAPS);
  assert.equal(headerVariables({ ...defaultSettings(), useProxyProtocol: true }), MAPS);
});

test('where a snippet may set a map variable, the headers read the maps', () => {
  assert.equal(headerVariables({ ...defaultSettings(), allowSnippetAnnotations: true }), MAPS);
  assert.equal(headerVariables({ ...defaultSettings(), httpSnippet: 'set $x 1;' }), MAPS);
  assert.equal(headerVariables({ ...defaultSettings(), serverSnippet: 'set $x 1;' }), MAPS);
  assert.equal(headerVariables({ ...defaultSettings(), locationSnippet: 'set $x 1;' }), MAPS);
});

test('$pass_port reads $server_port where $pass_server_port only passes it on, else the map', () => {
  assert.is(passPortSource(defaultSettings()), '$server_port');
  for (const s of [{ useForwardedHeaders: true }, { useProxyProtocol: true }, { allowSnippetAnnotations: true }, { serverSnippet: 'set $x 1;' }]) {
    assert.is(passPortSource({ ...defaultSettings(), ...s }), '$pass_server_port', JSON.stringify(s));
  }
});

test.run();
