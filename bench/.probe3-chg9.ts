import { createStore, defaultStoreOptions } from '../src/store/store.js';
import { createModelBuilder } from '../src/model/build.js';
import { snapshot } from '../src/model/core/hash.js';
import { decide } from '../src/model/core/decide.js';
import { silentLogger } from '../src/log.js';
import { generateEvents, ingressObject } from './gen.js';
import { ANNOTATION_REFERENCES } from '../src/model/ingress/annotations/index.js';
const logger = silentLogger();
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const mk = (n: number) => {
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, logger);
  for (const e of generateEvents({ n })) store.apply(e);
  const builder = createModelBuilder({ annotationsPrefix: 'nginx.ingress.kubernetes.io', defaultServerPort: 18181, logger });
  const snap = snapshot(builder.build(store).config);
  decide(null, snap);
  return { store, builder, snap, n };
};
const warm = process.argv.includes('--warm');
const small = warm ? mk(200) : null;
const big = mk(10_000);
const seq = warm ? [small!, small!, big, big, big] : [big, big, big];
let v = 2;
for (const X of seq) {
  const ing = ingressObject(101, { n: X.n }, v++);
  ing.metadata.annotations = { ...ing.metadata.annotations, 'nginx.ingress.kubernetes.io/proxy-body-size': `${v}m` };
  const key = `${ing.metadata.namespace}/${ing.metadata.name}`;
  X.store.apply({ kind: 'Ingress', type: 'update', key, object: ing });
  const next = snapshot(X.builder.build(X.store, [{ kind: 'Ingress', key }]).config);
  const c = cpu(); const d = decide(X.snap, next); console.log(`${X.n}: decide ${(cpu() - c).toFixed(2)} ms CPU (${d.kind})`);
  X.snap = next;
}
