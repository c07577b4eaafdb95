// Request scenarios that two conformance tests share (the suite runs one test body on two
// manifests): HTTPRouteRequestHeaderModifier's, for a rule's or a backendRef's RequestHeaderModifier.
import * as assert from 'uvu/assert';
import type { ProtocolClient } from './protocols.js';

/** /set, /add, /remove and /multiple of `host` each carry the conformance test's filter; every answer comes from `backend`. */
export async function expectRequestHeaderModifier(p: ProtocolClient, host: string, backend: string): Promise<void> {
  const got = async (path: string, headers: Record<string, string>) => {
    const r = await p.request(host, path, { headers });
    assert.is(r.backend, backend, path);
    return (r.json as { headers: Record<string, string> }).headers;
  };
  let h = await got('/set', { 'Some-Other-Header': 'val' });
  assert.equal([h['x-header-set'], h['some-other-header']], ['set-overwrites-values', 'val']);
  assert.is((await got('/set', { 'Some-Other-Header': 'val', 'X-Header-Set': 'some-other-value' }))['x-header-set'], 'set-overwrites-values');
  assert.is((await got('/add', { 'Some-Other-Header': 'val' }))['x-header-add'], 'add-appends-values');
  assert.is((await got('/add', { 'X-Header-Add': 'some-other-value' }))['x-header-add'], 'some-other-value,add-appends-values');
  assert.not.ok('x-header-remove' in (await got('/remove', { 'X-Header-Remove': 'val' })));
  h = await got('/multiple', { 'X-Header-Set-2': 'set-val-2', 'X-Header-Add-2': 'add-val-2', 'X-Header-Remove-2': 'remove-val-2', 'Another-Header': 'another-header-val' });
  assert.equal(
    [h['x-header-set-1'], h['x-header-set-2'], h['x-header-add-1'], h['x-header-add-2'], h['x-header-add-3'], h['another-header']],
    ['header-set-1', 'header-set-2', 'header-add-1', 'add-val-2,header-add-2', 'header-add-3', 'another-header-val'],
  );
  assert.not.ok('x-header-remove-1' in h || 'x-header-remove-2' in h);
}
