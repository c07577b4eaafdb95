// Property: whatever one Ingress says (random annotation values from each parser's grammar,
// hostile mutations, odd hosts and paths, snippets NGINX may refuse), the good Ingresses next to
// it keep serving and what NGINX runs passes `nginx -t`. The real sync actor, reload actor,
// narrower and dynamic-config actor drive a real NGINX; the inputs are seeded (PROPERTY_SEED
// reproduces a run) and the run is bounded in time (PROPERTY_MS, default 20 s).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { asyncScheduler, firstValueFrom } from 'rxjs';
import { createStore, defaultStoreOptions } from '../../src/store/store.js';
import type { SourceEvent } from '../../src/store/events.js';
import { createModelBuilder } from '../../src/model/build.js';
import { createQuarantine } from '../../src/model/core/quarantine.js';
import { createNarrower } from '../../src/actors/quarantine.js';
import { createReloadActor } from '../../src/actors/reload.js';
import { controlChannel } from '../../src/render/control.js';
import { createDynamicConfigActor } from '../../src/actors/dynamic-config.js';
import { createSyncer, type SyncResult } from '../../src/actors/sync.js';
import { modelSyncDeps } from '../../src/actors/model-sync.js';
import { ANNOTATION_GROUPS } from '../../src/model/ingress/annotations/index.js';
import { createNginxHarness, type NginxHarness } from '../support/nginx-harness.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices } from '../support/local-harness.js';
import { seededRandom, type Random } from '../support/random.js';
import { waitFor } from '../support/wait.js';
import { ANNOTATION_REFERENCES } from '../../src/model/ingress/annotations/index.js';

const SEED = Number(process.env.PROPERTY_SEED ?? 20_15);
const BUDGET_MS = Number(process.env.PROPERTY_MS ?? 20_000);
const P = 'nginx.ingress.kubernetes.io';
const GOOD_CREATED = '2026-01-01T00:00:00Z';
const FUZZ_CREATED = '2026-01-02T00:00:00Z';
const KEYS = ANNOTATION_GROUPS.flatMap((g) => Object.keys(g.keys));

/** Values from the grammar of each kind of annotation, valid and borderline. */
function grammarValue(r: Random, key: string, echo: EchoServer): string {
  const int = () => String(r.pick([0, 1, 2, 3, 5, 100, 499, 500, 599, 600, 65535, 65536, 2 ** 31, -1, r.int(0, 100_000)]));
  const size = () => `${r.pick(['0', '1', '4', '8', '512', '1024', '999999999999', String(r.int(0, 1e6))])}${r.pick(['', 'k', 'm', 'g', 'K', 'M', 't'])}`;
  const time = () => r.pick(['1s', '10', '5m', '1h30m', '1s1h', '500ms', '1y', '2M', '0', '99999999999999s']);
  const url = () => r.pick([`http://${echo.hostPort}/auth`, 'https://a.test/x?y=$host', 'http://[::1]:1/x', 'http://$host/x', 'ftp://a.test', 'http://a.test/x|y', 'http://a.test/^', 'file://x', '//a.test']);
  const path = () => r.pick(['/', '/a', '/api/(v1|v2)', '/a++', '/[\\w-.]+', '/(?<=a+)b', '/\\u0041', '/(?P<n>x)', '/x$', '/x{2}', '/"q"', '/a\\']);
  const codes = () => Array.from({ length: r.int(1, 3) }, () => String(r.pick([100, 200, 300, 404, 418, 499, 503, 599, 600]))).join(',');
  const cidrs = () => Array.from({ length: r.int(1, 3) }, () => r.pick(['10.0.0.0/8', '::1', '2001:db8::/32', '1.2.3.4/33', 'x', '0.0.0.0/0'])).join(',');
  const word = () => r.pick(['X-Foo', 'a', 'keep-alive', 'GET', 'POST', 'round_robin', 'ewma', 'cookie', 'balanced', 'HTTPS', 'GRPC', 'FCGI', 'Strict', 'None', '$request_uri', 'basic', 'digest']);
  if (/snippet/.test(key)) {
    return r.pick(['add_header X-Ok 1;', 'no_such_directive on;', 'proxy_buffers 1 4k;', 'set $x 1;', 'return 200;', 'location /inner { return 204; }', 'more_set_headers "A: b";', 'proxy_read_timeout 1s1h;', 'if ($host) {']);
  }
  if (/^(use-regex|ssl-redirect|force-ssl-redirect|preserve-trailing-slash|from-to-www-redirect|enable-cors|cors-allow-credentials|ssl-passthrough|enable-access-log|canary|session-cookie-secure|session-cookie-conditional-samesite-none|session-cookie-change-on-failure|upstream-hash-by-subset|service-upstream)$/.test(key)) return r.pick(['true', 'false', '1', 'yes', 'TRUE']);
  if (/size$/.test(key) && key !== 'upstream-hash-by-subset-size') return size();
  if (/timeout|duration|expires|max-age/.test(key)) return key === 'auth-cache-duration' ? `${codes().replace(/,/g, ' ')} ${time()}` : r.bool() ? int() : time();
  if (/url|signin$|redirect$|^app-root$|^x-forwarded-prefix$|rewrite-target|cors-allow-origin/.test(key)) return key === 'app-root' || key === 'x-forwarded-prefix' || key === 'rewrite-target' ? path() : url();
  if (/code|custom-http-errors/.test(key)) return codes();
  if (/source-range|allowlist/.test(key)) return cidrs();
  if (/limit|number|tries|weight|connections|rps|rpm|multiplier|subset-size/.test(key)) return int();
  if (/pattern/.test(key)) return path().slice(1);
  if (/alias|vhost|domain/.test(key)) return r.pick(['a.test', '*.a.test', 'www.a.test', 'a..test', '-a.test', 'a.test:8080', `${'x'.repeat(64)}.test`]);
  return word();
}

/** Hostile mutations of a value: NGINX-breaking characters, length, control characters, unicode. */
function mutate(r: Random, v: string): string {
  switch (r.int(0, 9)) {
    case 0: return `${v};`;
    case 1: return `${v}}`;
    case 2: return `${v}\n  return 200;`;
    case 3: return `${v}$`;
    case 4: return v.repeat(r.int(50, 600));
    case 5: return `${v}"`;
    case 6: return `${v}\\`;
    case 7: return `${v}é\u202e`;
    case 8: return ` ${v} `;
    default: return v;
  }
}

function fuzzIngress(r: Random, n: number, echo: EchoServer) {
  const annotations: Record<string, string> = {};
  for (let k = r.int(1, 5); k > 0; k--) {
    const key = r.pick(KEYS);
    const value = grammarValue(r, key, echo);
    annotations[`${P}/${key}`] = r.bool(0.35) ? mutate(r, value) : value;
  }
  // Snippets are what reaches nginx -t most often: one Ingress in four carries one.
  if (r.bool(0.25)) {
    const key = r.pick(['configuration-snippet', 'server-snippet']);
    annotations[`${P}/${key}`] = grammarValue(r, key, echo);
  }
  const host = r.pick(['fuzz.test', `fuzz-${n}.test`, `${'h'.repeat(r.int(40, 70))}.test`, '*.fuzz.test', 'good-1.test']);
  const path = r.pick(['/', '/f', '/api/(v1|v2', '/a++', '/[\\w-.]+', `/${'p'.repeat(r.int(1, 5000))}`, '/x y']);
  // Newer than the good Ingresses, as anything written after them is: on a shared host the oldest
  // Ingress's server-level settings (auth-tls, server-snippet, …) are the host's, so an older one
  // may rightly change what good-1.test answers (an unusable auth-tls-secret closes the host).
  return ingress('app', 'fuzz', { host, paths: [{ path, pathType: r.pick(['Prefix', 'ImplementationSpecific', 'Exact']), service: 'web' }], annotations, created: FUZZ_CREATED });
}

let h: NginxHarness;
let echo: EchoServer;

test.before(async () => {
  h = await createNginxHarness();
  echo = await startEchoServer({ address: '127.0.0.2', name: 'web' });
});

test.after(async () => {
  await h?.close();
  await echo?.close();
});

test('random and hostile values on one Ingress: the good ones always serve, what runs passes nginx -t', async () => {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true, configmap: 'ingress/nginx' }, ANNOTATION_REFERENCES);
  // The echo backend runs on loopback, as the harness's NGINX allows (local mode's policy).
  const addressPolicy = { allow: new Set(['loopback'] as const), ownPorts: new Set(h.runtime.upstreamAddresses?.ownPorts ?? []) };
  const opts = { annotationsPrefix: P, defaultServerPort: h.runtime.defaultServerPort, addressPolicy };
  const builder = createModelBuilder(opts);
  const quarantine = createQuarantine();
  const narrower = createNarrower({ store, quarantine, builder, logger: h.logger, probeBuilder: () => createModelBuilder(opts) });
  const reload = createReloadActor({ renderer: h.renderer, nginx: h.nginx, runtime: h.runtime, logger: h.logger, narrower, reloadTimeoutMs: 10_000 });
  const dynamic = createDynamicConfigActor({ control: controlChannel(h.runtime), scheduler: asyncScheduler, logger: h.logger });
  const sync = createSyncer(modelSyncDeps({ store, builder, scheduler: asyncScheduler, reload, dynamic, quarantine }));
  let n = 0;
  let id = 0;
  const apply = async (objects: object[], type: 'add' | 'update' | 'delete' = 'update'): Promise<SyncResult> => {
    const items = objects.map((o) => {
      const obj = o as { kind: SourceEvent['kind']; metadata: { namespace?: string; name: string } };
      const input = { kind: obj.kind, type, key: `${obj.metadata.namespace ?? 'default'}/${obj.metadata.name}`, object: obj } as unknown as SourceEvent;
      store.apply(input);
      return { id: ++id, t: Date.now(), skippable: true, input };
    });
    return firstValueFrom(sync({ n: ++n, t: asyncScheduler.now(), items }));
  };
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx', namespace: 'ingress' }, data: { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' } };
  const goods = [1, 2, 3].map((i) => ingress('app', `good-${i}`, {
    host: `good-${i}.test`, paths: [{ path: '/', service: 'web' }], created: GOOD_CREATED,
    annotations: i === 2 ? { [`${P}/proxy-read-timeout`]: '30', [`${P}/enable-cors`]: 'true' } : i === 3 ? { [`${P}/limit-rps`]: '1000' } : {},
  }));
  const first = await apply([cm, service('app', 'web'), ...slices('app', 'web', [echo]), ...goods]);
  assert.ok(first.applied, first.error ?? first.reload?.error);

  const r = seededRandom(SEED);
  const started = Date.now();
  let iterations = 0;
  let quarantined = 0;
  while (Date.now() - started < BUDGET_MS) {
    iterations++;
    const fuzz = fuzzIngress(r, iterations, echo);
    const what = `seed ${SEED}, iteration ${iterations}: ${JSON.stringify(fuzz.metadata.annotations).slice(0, 400)} host ${fuzz.spec.rules![0]!.host} path ${fuzz.spec.rules![0]!.http.paths[0]!.path.slice(0, 60)}`;
    const result = await apply([fuzz]);
    assert.ok(result.applied, `${what}: the sync was not applied: ${result.error ?? result.reload?.error ?? result.dynamic?.error}`);
    if (result.quarantined.length > 0) quarantined++;
    for (const g of goods) {
      const host = g.spec.rules![0]!.host!;
      const reply = await waitFor(async () => {
        const res = await h.http(h.runtime.httpPort, '/', { host });
        return res.status === 200 ? res : null;
      }, { what: `${host} to serve (${what})`, timeoutMs: 5000 });
      assert.is(reply.status, 200);
    }
    const test = await h.nginx.test(h.runtime.confPath);
    assert.ok(test.ok, `${what}: the running nginx.conf fails nginx -t: ${test.output}`);
  }
  console.log(`  property: ${iterations} iterations in ${Date.now() - started} ms (seed ${SEED}), ${quarantined} with a quarantined object`);
  assert.ok(iterations >= 10, `only ${iterations} iterations in the time budget`);
});

test.run();
