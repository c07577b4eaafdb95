// mirror block: `mirror` to an internal location per Ingress (its name holds a space no path may
// hold), whose Lua content handler sends the copy; the body kept in a file when it is copied.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MirrorConfig } from '../../../../src/model/ingress/annotations/mirror.js';
import { inOrder, renderLocation, renderServer } from '../../../support/render-blocks.js';

const M: MirrorConfig = { scheme: 'https', host: 'mirror.example.com', port: 8443, uri: '/copy$request_uri', hostHeader: 'shadow.example.com', requestBody: true };

test('mirror and the body kept in a file in the proxy slot; the internal location hands the copy to Lua', () => {
  const view = renderLocation({ mirror: M });
  const name = /mirror "(\/_mirror [0-9a-f]{12})";/.exec(view.locationsText)?.[1];
  assert.ok(name, view.locationsText);
  inOrder(view.locationsText, `mirror "${name}";`, 'mirror_request_body on;', 'client_body_in_file_only clean;');
  inOrder(view.extra, `location = "${name}" {`, 'internal;', 'access_log off;', 'set $mirror_uri "/copy$request_uri";', 'require("mirror").send(',
    'scheme = "https", host = "mirror.example.com", port = 8443, host_header = "shadow.example.com", body = true');
});

test('without the body: no file; $host as target and Host is the request\'s (nil in Lua); one location per Ingress', () => {
  const m = { ...M, host: '$host', hostHeader: '$host', requestBody: false };
  const view = renderServer([{ path: '/a', mirror: m }, { path: '/b', mirror: m }]);
  assert.match(view.locationsText, 'mirror_request_body off;');
  assert.not.match(view.locationsText, 'client_body_in_file_only');
  assert.match(view.extra, 'host = nil, port = 8443, host_header = nil, body = false');
  assert.is(view.extra.match(/location = "\/_mirror /g)?.length, 1);
});

test('a mirror URI the renderer refuses denies the location and adds no mirror location', () => {
  const view = renderLocation({ mirror: { ...M, uri: '/x\nreturn 200;' } });
  assert.equal(view.problems.map((p) => p.field), ['mirror-target']);
  assert.is(view.extra, '');
});

test.run();
