// Checks that two source trees build the same model and render the same nginx.conf and payloads
// for bench/gen.ts clusters (for changes meant to cost less without changing any output): each
// tree in a child process of its own prints a SHA-256 per size, dynamic-routes setting and part
// (the Configuration as JSON, nginx.conf with the tree's path and its checksum taken out, the backends, servers
// and routes payloads, the warnings), from a fresh builder and renderer and again from the same
// ones after one Ingress changed, then a canary's primary, then the canary (their caches reused); any difference is printed and the exit code is 1.
//   node --import tsx bench/same-output.ts <treeA> <treeB> [--sizes 1000,10000] [--dump DIR (writes each nginx.conf)]
//   node --import tsx bench/same-output.ts --child <tree> <sizes>   (internal)
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { arg } from './lib.js';

const run = promisify(execFile);
const PREFIX = 'nginx.ingress.kubernetes.io';
const sha = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

async function child(tree: string, sizes: number[]): Promise<Record<string, string>> {
  const load = (path: string) => import(`${tree}/${path}`);
  const { createStore, defaultStoreOptions } = await load('src/store/store.ts');
  const { createModelBuilder } = await load('src/model/build.ts');
  const { backendsPayload, serversPayload } = await load('src/model/core/payload.ts');
  const routes = existsSync(`${tree}/src/model/core/routes-payload.ts`) ? await load('src/model/core/routes-payload.ts') : null;
  const { createRenderer } = await load('src/render/engine.ts');
  const { DEFAULT_TEMPLATE_DIR, defaultRuntime } = await load('src/render/runtime.ts');
  // One generator (this script's) for both trees: each tree's .bench/ holds a certificate of its own.
  const { generateEvents, ingressObject } = await import('./gen.js');
  const { silentLogger } = await load('src/log.ts');
  const { ANNOTATION_REFERENCES } = await load('src/model/ingress/annotations/index.ts');
  const logger = silentLogger();
  const runtime = defaultRuntime({
    prefix: '/nonexistent', listenAddresses: ['127.0.0.1'], httpPort: 18080, httpsPort: 18443, statusPort: 20246, streamPort: 20247,
    defaultServerPort: 18181, workerProcesses: '1', resolvers: ['127.0.0.1'],
  });
  const out: Record<string, string> = {};
  for (const n of sizes) {
    const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, logger);
    for (const e of generateEvents({ n })) store.apply(e);
    for (const dynamicRoutes of [false, true]) {
      const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 18181, logger, dynamicRoutes, now: () => new Date('2026-11-28T12:00:00Z') });
      const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger });
      const parts = (at: string, changes?: unknown) => {
        const { config, warnings } = builder.build(store, changes);
        out[`${at} config`] = sha(JSON.stringify(config));
        out[`${at} warnings`] = sha(JSON.stringify(warnings));
        let conf = renderer.render(config, runtime).split(tree).join('<tree>');
        // The checksum covers the text with the tree's path in it.
        const checksum = /# Configuration checksum: (\w+)/.exec(conf)?.[1];
        if (checksum) conf = conf.split(checksum).join('<checksum>');
        out[`${at} nginx.conf`] = sha(conf);
        const dump = arg('--dump');
        if (dump) writeFileSync(`${dump}/${sha(tree)}-${at.replace(/\W+/g, '-')}.conf`, conf);
        out[`${at} backends payload`] = sha(JSON.stringify(backendsPayload(config)));
        out[`${at} servers payload`] = sha(JSON.stringify(serversPayload(config)));
        if (routes) out[`${at} routes payload`] = sha(JSON.stringify(routes.routesPayload(config)));
      };
      const at = `${n} dynamicRoutes=${dynamicRoutes}`;
      parts(at);
      // One Ingress changed (proxy-body-size, a new path): built and rendered from the caches.
      const ing = ingressObject(7, { n }, 3);
      ing.metadata.annotations = { ...ing.metadata.annotations, [`${PREFIX}/proxy-body-size`]: '3m' };
      const key = `${ing.metadata.namespace}/${ing.metadata.name}`;
      store.apply({ kind: 'Ingress', type: 'update', key, object: ing });
      parts(`${at} after one change`, [{ kind: 'Ingress', key }]);
      store.apply({ kind: 'Ingress', type: 'update', key, object: ingressObject(7, { n }, 4) });
      // A canary's primary changed (proxy-body-size), then the canary (its weight): bench/gen.ts
      // makes Ingress 19 a canary of 18.
      const changeOne = (i: number, annotation: string, value: string, label: string) => {
        const next = ingressObject(i, { n }, 3);
        next.metadata.annotations = { ...next.metadata.annotations, [`${PREFIX}/${annotation}`]: value };
        const k = `${next.metadata.namespace}/${next.metadata.name}`;
        store.apply({ kind: 'Ingress', type: 'update', key: k, object: next });
        parts(`${at} after ${label}`, [{ kind: 'Ingress', key: k }]);
      };
      changeOne(18, 'proxy-body-size', '3m', 'a canary primary changed');
      changeOne(19, 'canary-weight', '35', 'a canary changed');
    }
  }
  return out;
}

async function main(): Promise<void> {
  const sizes = (arg('--sizes') ?? '1000,10000').split(',').map(Number);
  const childTree = arg('--child');
  if (childTree) {
    process.stdout.write(`${JSON.stringify(await child(resolve(childTree), sizes))}\n`);
    return;
  }
  const [a, b] = process.argv.slice(2).filter((x) => !x.startsWith('--') && x !== arg('--sizes') && x !== arg('--dump'));
  if (!a || !b) throw new Error('usage: bench/same-output.ts <treeA> <treeB> [--sizes 1000,10000]');
  const one = async (tree: string): Promise<Record<string, string>> => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', import.meta.filename, '--child', resolve(tree), '--sizes', sizes.join(','), ...(arg('--dump') ? ['--dump', resolve(arg('--dump')!)] : [])], {
      cwd: resolve(tree), timeout: 900_000, maxBuffer: 1 << 20,
    });
    return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, string>;
  };
  const [ha, hb] = await Promise.all([one(a), one(b)]);
  let differ = 0;
  for (const k of Object.keys(ha)) {
    const same = ha[k] === hb[k];
    if (!same) differ++;
    process.stdout.write(`${same ? 'same  ' : 'DIFFER'} ${k} ${ha[k]} ${hb[k] ?? '(missing)'}\n`);
  }
  process.stdout.write(differ === 0 ? 'identical\n' : `${differ} parts differ\n`);
  process.exitCode = differ === 0 ? 0 : 1;
}

await main();
