// The arrays a review hands from one function to the next are of one elements kind whether the
// function that made them runs in the interpreter or optimised. V8's Array.prototype.map makes a
// packed array in the interpreter and a holey one once TurboFan inlines it; code optimised on the
// one kind (the model build, selectTLS, the topology's loops) is thrown away when it meets the
// other and compiled again, a stall of tens of milliseconds in the reviews of a webhook that has
// run for a while (docs/performance.md, issue 29, part adm11). V8's natives syntax, turned on
// here, tells the kinds apart and optimises a function on demand; nothing is timed.
import { setFlagsFromString } from 'node:v8';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Ingress } from '../../../src/store/kube-types.js';
import { createNeighbourIndex, neighbourhood } from '../../../src/admission/candidate.js';
import { hostEntries, sortedByName } from '../../../src/model/ingress/topology.js';
import type { IngressFragment } from '../../../src/model/ingress/fragments.js';
import type { AssembledServer } from '../../../src/model/ingress/servers.js';
import { PREFIX, ingress } from '../../support/model-objects.js';

setFlagsFromString('--allow-natives-syntax');
// Parsed after the flag is set, so the % calls are allowed in these functions only.
const isHoley = new Function('a', 'return %HasHoleyElements(a)') as (a: unknown[]) => boolean;
const prepare = new Function('f', '%PrepareFunctionForOptimization(f)') as (f: unknown) => void;
const optimiseOnNextCall = new Function('f', '%OptimizeFunctionOnNextCall(f)') as (f: unknown) => void;
/** V8's optimisation status has bit 4 set for optimised code. */
const isOptimised = new Function('f', 'return (%GetOptimizationStatus(f) & 16) !== 0') as (f: unknown) => boolean;

/** Whether `call()`'s array from `fn` is holey in the interpreter, then once `fn` is optimised. */
function kindsBeforeAndAfterOptimising(fn: unknown, call: () => unknown[]): { interpreted: boolean; optimised: boolean } {
  prepare(fn);
  const interpreted = isHoley(call());
  call();
  optimiseOnNextCall(fn);
  const after = call();
  // Also fails when the optimised code was thrown away during the call, as on meeting an array of
  // the other kind (the old neighbourhood's own sort did).
  assert.ok(isOptimised(fn), 'the function is still optimised after the call');
  return { interpreted, optimised: isHoley(after) };
}

test('a review\'s neighbourhood is of one kind, interpreted or optimised', () => {
  const stored: Ingress[] = [
    ingress('a', 'shop.example.com', [['/', 'Prefix', 'web', 80]]),
    ingress('b', 'shop.example.com', [['/api', 'Prefix', 'api', 80]], { ts: '2026-02-01T00:00:00Z' }),
    ingress('c', 'other.example.com', [['/', 'Prefix', 'other', 80]]),
  ];
  const index = createNeighbourIndex(PREFIX);
  index.follow(stored);
  const candidate = ingress('new', 'shop.example.com', [['/cart', 'Prefix', 'web', 80]], { ts: '2026-03-01T00:00:00Z' });
  const kinds = kindsBeforeAndAfterOptimising(neighbourhood, () => neighbourhood(candidate, index, PREFIX));
  assert.equal(kinds.optimised, kinds.interpreted);
  assert.equal(neighbourhood(candidate, index, PREFIX).map((i) => i.metadata.name), ['a', 'b', 'new']);
});

test('the topology\'s host entries and name-sorted values are of one kind, interpreted or optimised', () => {
  const hosts = ['b.example.com', '_', 'a.example.com'];
  const byHost = new Map(hosts.map((h) => [h, [] as IngressFragment[]]));
  const assembled = new Map(hosts.map((h) => [h, { server: { hostname: h } } as unknown as AssembledServer]));
  const entries = kindsBeforeAndAfterOptimising(hostEntries, () => hostEntries(hosts, { byHost, assembled }));
  assert.equal(entries.optimised, entries.interpreted);
  assert.equal(hostEntries(hosts, { byHost, assembled }).map((e) => e.host), ['_', 'a.example.com', 'b.example.com']);

  const plans = new Map([['b', { name: 'b' }], ['a', { name: 'a' }], ['c', { name: 'c' }]]);
  const sorted = kindsBeforeAndAfterOptimising(sortedByName, () => sortedByName(plans));
  assert.equal(sorted.optimised, sorted.interpreted);
  assert.equal(sortedByName(plans).map((p) => p.name), ['a', 'b', 'c']);
});

test.run();
