// The admission webhook refuses what the model refuses for its cost: a use-regex path and a
// canary-by-header-pattern that can backtrack catastrophically are named, with the pattern and
// an attack string, before the Ingress is stored.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createReviewer } from '../../../src/admission/review.js';
import { PREFIX, ingress, service, slice, testStore } from '../../support/model-objects.js';

test('a catastrophic regex path or canary pattern is denied with the pattern and an attack', () => {
  const store = testStore();
  store.put('Service', service('web'));
  store.put('EndpointSlice', slice('web-1', 'web', ['10.0.0.1']));
  store.put('Ingress', ingress('primary', 'canary.example.com', [['/', 'Prefix', 'web', 80]], { ts: '2026-01-01T00:00:00Z' }));
  const reviewer = createReviewer({ store, annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => new Date('2026-06-01T00:00:00Z') });

  const path = reviewer.review(ingress('regex', 'regex.example.com', [['/r/(a|aa)+$', 'ImplementationSpecific', 'web', 80]], { ts: '2026-05-01T00:00:00Z', annotations: { 'use-regex': 'true' } }));
  assert.not.ok(path.allowed, JSON.stringify(path.findings));
  assert.ok(path.findings.some((f) => f.severity === 'deny' && /\/r\/\(a\|aa\)\+\$.*can backtrack catastrophically.*attack: "/.test(f.message)), JSON.stringify(path.findings));

  const canary = reviewer.review(ingress('canary', 'canary.example.com', [['/', 'Prefix', 'web', 80]], {
    ts: '2026-05-01T00:00:00Z', annotations: { canary: 'true', 'canary-by-header': 'X-Canary', 'canary-by-header-pattern': '^(a|aa)+$' },
  }));
  assert.not.ok(canary.allowed);
  assert.ok(canary.findings.some((f) => f.severity === 'deny' && /canary-by-header-pattern/.test(f.field) && /attack: "/.test(f.message)), JSON.stringify(canary.findings));

  const fine = reviewer.review(ingress('fine', 'fine.example.com', [['/api/v[0-9]+/(.*)', 'ImplementationSpecific', 'web', 80]], { ts: '2026-05-01T00:00:00Z', annotations: { 'use-regex': 'true' } }));
  assert.ok(fine.allowed, JSON.stringify(fine.findings));
});

test.run();
