// New Ingresses and removed ones take the incremental paths (the store's kept order, the backend
// name tally and the topology patched by the hosts that changed): after each of several hundred
// random adds, changes and deletes, among them canaries (and Ingresses turning canary or back), hosts shared by several Ingresses,
// backend names two Services share, TLS and Ingresses set aside in the quarantine, a builder
// that has seen every step gives what a fresh builder gives, payloads included; and the servers
// map's change worked out from the changed servers alone is serversDelta's of the whole maps.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createModelBuilder } from '../../../src/model/build.js';
import { decide } from '../../../src/model/core/decide.js';
import { snapshot } from '../../../src/model/core/hash.js';
import { stableJSON } from '../../../src/model/core/json.js';
import { backendsPayload, serversChange, serversDelta, serversPayload } from '../../../src/model/core/payload.js';
import { createQuarantine } from '../../../src/model/core/quarantine.js';
import { routesPayload } from '../../../src/model/core/routes-payload.js';
import type { Ingress } from '../../../src/store/kube-types.js';
import { ingress, service, slice, testStore, tlsSecret, PREFIX } from '../../support/model-objects.js';
import { FIXTURE_NOW as NOW, MODEL_FIXTURES } from '../../support/model-fixtures.js';

const property = suite('incremental builds after adds and deletes');

property('a builder that saw every step gives what a fresh one gives (200 random steps)', () => {
  randomSteps({ seed: 2911 });
});

property('--host-ownership: the same, with hosts contested between namespaces patched by their hosts alone', () => {
  const { updatedContested } = randomSteps({ seed: 4177, hostOwnership: true });
  assert.ok(updatedContested > 5, `${updatedContested} incremental builds changed who is refused on a host`);
});

function randomSteps(o: { seed: number; hostOwnership?: boolean }): { updatedContested: number } {
  let seed = o.seed;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return (seed >>> 8) % n; };
  const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)]!;
  const pem = (f: string) => readFileSync(join(MODEL_FIXTURES, '_certs', f), 'utf8');
  const store = testStore();
  // team-x/auth and team/x-auth are both backend team-x-auth-80 in ingress-nginx's naming.
  const services: Array<[string, string]> = [['default', 's0'], ['default', 's1'], ['default', 's2'], ['team-x', 'auth'], ['team', 'x-auth']];
  for (const [ns, name] of services) {
    store.put('Service', service(name, ns));
    store.put('EndpointSlice', slice(`${name}-x`, name, [`10.0.${services.findIndex(([, n]) => n === name)}.1`], ns));
  }
  store.put('Secret', tlsSecret('tls', pem('tls.crt'), pem('tls.key')));
  const shared = ['a.example.com', 'b.example.com', 'shared.example.com'];
  const quarantine = createQuarantine({ now: () => NOW.getTime() });
  const options = { annotationsPrefix: PREFIX, defaultServerPort: 8181, now: () => NOW, dynamicRoutes: true, hostOwnership: o.hostOwnership === true };
  const contestedHost = /belongs to namespace/;
  let updatedContested = 0;
  let ownershipBefore = '[]';
  const builder = createModelBuilder(options);
  const first = builder.build(quarantine.view(store)).config;
  let heldServers = serversChange(null, first).held();
  let heldWhole = serversPayload(first);
  const live = new Map<string, Ingress>();
  const keyOf = (ing: Ingress) => `${ing.metadata.namespace}/${ing.metadata.name}`;
  let created = 0;
  const counts = { add: 0, change: 0, delete: 0, setAside: 0, canaryToggled: 0 };
  for (let step = 0; step < 200; step++) {
    const op = rnd(20);
    let hints: Array<{ kind: 'Ingress'; key: string }> | undefined = [];
    if (op < 10 || live.size < 5) {
      // A new Ingress: mostly a host of its own, sometimes a shared one, a canary, TLS or a colliding backend name.
      const n = created++;
      const flavour = rnd(10);
      const [ns, svc] = flavour === 0 ? services[3]! : flavour === 1 ? services[4]! : ['default', `s${rnd(3)}`];
      // from-to-www: sometimes on the www twin of the previous host, whose redirect it then takes.
      const host = flavour === 5 && n > 0 && rnd(2) === 0 ? `www.h${n - 1}.example.com` : rnd(4) === 0 ? pick(shared) : `h${n}.example.com`;
      const ing = ingress(`i${n}`, host, [[pick(['/', '/api', '/web']), pick(['Prefix', 'Exact'] as const), svc, 80]], {
        ns, ts: new Date(Date.UTC(2026, 0, 1 + rnd(20))).toISOString(),
        annotations: flavour === 2 ? { canary: 'true', 'canary-weight': String(rnd(100)) } : flavour === 3 ? { affinity: 'cookie' } : flavour === 5 ? { 'from-to-www-redirect': 'true' } : {},
        tls: flavour === 4 ? [{ hosts: [host], secretName: 'tls' }] : undefined,
      });
      live.set(keyOf(ing), ing);
      store.put('Ingress', ing);
      hints.push({ kind: 'Ingress', key: keyOf(ing) });
      counts.add++;
    } else if (op < 14) {
      // A changed path, same creation time (the Ingress keeps its place); now and then it turns
      // canary or stops being one.
      const old = pick([...live.values()]);
      const ing = structuredClone(old);
      ing.spec.rules![0]!.http!.paths[0]!.path = pick(['/', '/v2', '/other']);
      if (rnd(4) === 0) {
        const annotations = (ing.metadata.annotations ??= {});
        if (annotations[`${PREFIX}/canary`] === 'true') delete annotations[`${PREFIX}/canary`];
        else Object.assign(annotations, { [`${PREFIX}/canary`]: 'true', [`${PREFIX}/canary-weight`]: '30' });
        counts.canaryToggled++;
      }
      live.set(keyOf(ing), ing);
      store.put('Ingress', ing);
      hints.push({ kind: 'Ingress', key: keyOf(ing) });
      counts.change++;
    } else if (op < 18) {
      const old = pick([...live.values()]);
      live.delete(keyOf(old));
      store.remove('Ingress', old);
      hints.push({ kind: 'Ingress', key: keyOf(old) });
      counts.delete++;
    } else {
      // Set one aside, or let all go: the sync then builds without hints, as model-sync.ts does.
      if (rnd(2) === 0) quarantine.addIngress(store, keyOf(pick([...live.values()])), 'refused by NGINX');
      else quarantine.release(store, { objects: [], everything: true });
      hints = undefined;
      counts.setAside++;
    }
    const view = quarantine.view(store);
    const before = builder.build(view, hints);
    const cold = createModelBuilder(options).build(view);
    // A change of who is refused where: only a build that touched a contested host can make it.
    const ownership = JSON.stringify(cold.warnings.filter((w) => contestedHost.test(w.message)));
    if (before.path === 'updated' && ownership !== ownershipBefore) updatedContested++;
    ownershipBefore = ownership;
    assert.fixture(stableJSON(before.config), stableJSON(cold.config), `step ${step}`);
    assert.equal(before.warnings, cold.warnings, `step ${step} warnings`);
    assert.is(decide(snapshot(cold.config), snapshot(before.config)).kind, 'none', `step ${step}: equal by hashes`);
    assert.is(JSON.stringify(routesPayload(before.config)), JSON.stringify(routesPayload(cold.config)), `step ${step} routes payload`);
    assert.is(JSON.stringify(serversPayload(before.config)), JSON.stringify(serversPayload(cold.config)), `step ${step} servers payload`);
    assert.is(JSON.stringify(backendsPayload(before.config)), JSON.stringify(backendsPayload(cold.config)), `step ${step} backends payload`);
    const whole = serversPayload(before.config);
    const change = serversChange(heldServers, before.config);
    assert.is(JSON.stringify(change.part), JSON.stringify(serversDelta(heldWhole, whole)), `step ${step} servers change`);
    heldServers = change.held();
    assert.is(stableJSON(heldServers.payload.servers), stableJSON(whole.servers), `step ${step} servers map held`);
    heldWhole = whole;
  }
  assert.ok(counts.add > 70 && counts.delete > 20 && counts.change > 20 && counts.setAside > 5 && counts.canaryToggled > 5, JSON.stringify(counts));
  return { updatedContested };
}

property.run();
