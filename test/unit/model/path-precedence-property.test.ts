// Property: on a host shared by namespaces, random path sets (pathTypes, trailing slashes, regex
// where allowed) go where the rule says (test/support/path-precedence.ts, written from the docs,
// not from src/model), every win over an older Ingress of another namespace is warned on both
// Ingresses, every warning's example request is such a win, and full and incremental builds say
// the same. Seeded (PROPERTY_SEED reproduces a run); test/e2e/path-precedence-property.test.ts
// sends the requests to real NGINX.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createModelBuilder } from '../../../src/model/build.js';
import { LocationChooser } from '../../../src/model/core/location-choice.js';
import type { Configuration, ModelWarning } from '../../../src/model/core/types.js';
import { ingress, service, slice, testStore, PREFIX } from '../../support/model-objects.js';
import { precedence, probeURIs, randomHost, type HostIngress } from '../../support/path-precedence.js';
import { seededRandom } from '../../support/random.js';

const SEED = Number(process.env.PROPERTY_SEED ?? 30_1);
const HOSTS = Number(process.env.PROPERTY_HOSTS ?? 120);

function storeFor(host: string, ings: readonly HostIngress[]) {
  const store = testStore();
  const objects = ings.map((ing, i) => {
    const [ns, name] = ing.key.split('/') as [string, string];
    store.put('Service', service(name, ns));
    store.put('EndpointSlice', slice(`${name}-1`, name, [`10.0.${i}.1`], ns));
    return ingress(name, host, ing.paths.map((p) => [p.path, p.pathType, name, 80]), {
      ns, ts: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(), annotations: ing.regex ? { 'use-regex': 'true' } : {},
    });
  });
  return { store, objects };
}

/** Takeover warnings as (taker, victim, example) on the taker's side, and the victims' side as pairs. */
function takeovers(ws: readonly ModelWarning[]) {
  const taking: Array<{ taker: string; victim: string; example: string | null; text: string }> = [];
  const taken = new Set<string>();
  for (const w of ws) {
    if (w.reason !== 'Takeover') continue;
    const taker = /^Ingress (\S+)$/.exec(w.object)![1]!;
    const t = /^takes traffic of Ingress (\S+) /.exec(w.message);
    if (t) taking.push({ taker, victim: t[1]!, example: /, e\.g\. (\S+)$/.exec(w.message)?.[1] ?? null, text: w.message });
    const v = /^Ingress (\S+) of namespace \S+ takes traffic of this Ingress/.exec(w.message);
    if (v) taken.add(`${v[1]} -> ${taker}`);
  }
  return { taking, taken };
}

function ownerIn(config: Configuration, host: string, uri: string): string | null {
  const server = config.servers.find((s) => s.hostname === host)!;
  const chosen = new LocationChooser(server).choose(uri);
  assert.ok(chosen !== undefined, `${uri}: every pattern here can be analysed`);
  const loc = chosen?.loc;
  return loc && !loc.isDefBackend && loc.ingress ? `${loc.ingress.namespace}/${loc.ingress.name}` : null;
}

test(`random path sets across namespaces on one host (seed ${SEED}, ${HOSTS} hosts)`, () => {
  const r = seededRandom(SEED);
  let requests = 0;
  let wins = 0;
  for (let h = 0; h < HOSTS; h++) {
    const host = `h${h}.test`;
    const ings = randomHost(r, `i${h}`);
    const rule = precedence(ings);
    const { store, objects } = storeFor(host, ings);
    for (const o of objects) store.put('Ingress', o);
    const full = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => new Date('2026-11-01T00:00:00Z') }).build(store);
    const ctx = `seed ${SEED} host ${h}: ${JSON.stringify(ings)}`;
    const t = takeovers(full.warnings);
    assert.not.ok(t.taking.some((w) => w.example === null), `${ctx}\nevery warning names an example request:\n${t.taking.map((w) => w.text).join('\n')}`);
    const warned = new Set(t.taking.map((w) => `${w.taker} -> ${w.victim}`));
    for (const uri of probeURIs(ings, t.taking.map((w) => w.example!))) {
      requests++;
      const expected = rule.owner(uri);
      assert.is(ownerIn(full.config, host, uri), expected === null ? null : ings[expected]!.key, `${ctx}\n${uri} goes to`);
      for (const v of rule.takenFrom(uri)) {
        wins++;
        const pair = `${ings[expected!]!.key} -> ${ings[v]!.key}`;
        assert.ok(warned.has(pair), `${ctx}\n${uri}: ${pair} is warned on the taker; warned: ${[...warned].join(', ')}`);
        assert.ok(t.taken.has(pair), `${ctx}\n${uri}: ${pair} is warned on the victim`);
      }
    }
    // What a warning says happens: its example goes to the taker and the victim matches it.
    for (const w of t.taking) {
      const taker = ings.findIndex((i) => i.key === w.taker);
      const victim = ings.findIndex((i) => i.key === w.victim);
      assert.ok(victim < taker && ings[victim]!.namespace !== ings[taker]!.namespace, `${ctx}\n${w.text}: an older Ingress of another namespace`);
      assert.is(rule.owner(w.example!), taker, `${ctx}\n${w.text}: the example goes to the taker`);
      assert.ok(rule.claims(victim, w.example!), `${ctx}\n${w.text}: the victim matches the example`);
    }

    // Incremental builds, one Ingress at a time, end where the full build is.
    const inc = storeFor(host, ings);
    const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => new Date('2026-11-01T00:00:00Z') });
    builder.build(inc.store);
    let last = null as ReturnType<typeof builder.build> | null;
    for (const o of inc.objects) {
      inc.store.put('Ingress', o);
      last = builder.build(inc.store, [{ kind: 'Ingress', key: `${o.metadata.namespace}/${o.metadata.name}` }]);
    }
    const pick = (c: Configuration) => JSON.stringify(c.servers.find((s) => s.hostname === host)!.locations.map((l) => [l.path, l.pathType, l.backend]));
    assert.is(pick(last!.config), pick(full.config), `${ctx}: incremental locations`);
    assert.equal(takeovers(last!.warnings).taking.map((w) => w.text).sort(), t.taking.map((w) => w.text).sort(), `${ctx}: incremental warnings`);
  }
  assert.ok(wins > HOSTS / 2, `the generator makes cross-namespace wins (${wins} in ${requests} requests)`);
});

test.run();
