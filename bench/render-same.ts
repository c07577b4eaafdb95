// Not a figure: checks that two source trees render the same nginx.conf (and checksum) for the
// generated clusters, for render changes that must not change the output. Each tree renders in
// a child process of its own, static servers (every host a server block, as bench/model.ts and
// bench/ab.ts render) and with --enable-dynamic-routes, first with a fresh renderer and then
// again with the same renderer after one Ingress changed (its cached fragments reused).
//   node --import tsx bench/render-same.ts <treeA> <treeB> [--n 1000,10000] [--keep DIR]
//   node --import tsx bench/render-same.ts --child <tree> --n N [--keep DIR]   (internal)
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { arg } from './lib.js';

const run = promisify(execFile);
const PREFIX = 'nginx.ingress.kubernetes.io';

interface Rendered { case: string; bytes: number; sha256: string; checksum: string }

async function child(tree: string, n: number, keep: string | undefined): Promise<Rendered[]> {
  const load = (path: string) => import(`${tree}/${path}`);
  const { createStore, defaultStoreOptions } = await load('src/store/store.ts');
  const { createModelBuilder } = await load('src/model/build.ts');
  const { createRenderer } = await load('src/render/engine.ts');
  const { DEFAULT_TEMPLATE_DIR, defaultRuntime } = await load('src/render/runtime.ts');
  const { generateEvents, ingressObject } = await load('bench/gen.ts');
  const { silentLogger } = await load('src/log.ts');
  const { ANNOTATION_REFERENCES } = await load('src/model/ingress/annotations/index.ts');
  const logger = silentLogger();
  if (keep) mkdirSync(keep, { recursive: true });
  const store = createStore({ ...defaultStoreOptions(), watchIngressWithoutClass: true }, ANNOTATION_REFERENCES, logger);
  for (const e of generateEvents({ n })) store.apply(e);
  const runtime = defaultRuntime({
    prefix: '/nonexistent', listenAddresses: ['127.0.0.1'], httpPort: 18080, httpsPort: 18443, statusPort: 20246, streamPort: 20247,
    defaultServerPort: 18181, workerProcesses: '1', resolvers: ['127.0.0.1'],
  });
  // The same Lua directory for both trees (it is printed in nginx.conf).
  runtime.luaDir = '/nonexistent/lua';
  const out: Rendered[] = [];
  for (const dynamicRoutes of [false, true]) {
    const builder = createModelBuilder({ annotationsPrefix: PREFIX, defaultServerPort: 18181, logger, dynamicRoutes });
    const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger });
    const one = (name: string, config: unknown) => {
      const r = renderer.renderWithWarnings(config, runtime);
      const sha256 = createHash('sha256').update(r.text).digest('hex');
      if (keep) writeFileSync(join(keep, `${name}.conf`), r.text);
      out.push({ case: name, bytes: Buffer.byteLength(r.text), sha256, checksum: r.checksum });
    };
    const mode = dynamicRoutes ? 'dynamic' : 'static';
    one(`${n}-${mode}-fresh`, builder.build(store).config);
    // A changed Ingress (proxy-body-size and a new version): the other fragments come from the cache.
    const ing = ingressObject(7, { n }, 3);
    ing.metadata.annotations = { ...ing.metadata.annotations, [`${PREFIX}/proxy-body-size`]: '3m' };
    const key = `${ing.metadata.namespace}/${ing.metadata.name}`;
    store.apply({ kind: 'Ingress', type: 'update', key, object: ing });
    one(`${n}-${mode}-changed`, builder.build(store, [{ kind: 'Ingress', key }]).config);
    // Back to the original, for the next mode.
    store.apply({ kind: 'Ingress', type: 'update', key, object: ingressObject(7, { n }, 4) });
  }
  return out;
}

async function main(): Promise<void> {
  const sizes = (arg('--n') ?? '1000,10000').split(',').map(Number);
  const keep = arg('--keep');
  const childTree = arg('--child');
  if (childTree) {
    process.stdout.write(`${JSON.stringify(await child(resolve(childTree), sizes[0]!, keep))}\n`);
    return;
  }
  const [a, b] = process.argv.slice(2).filter((x) => !x.startsWith('--') && x !== arg('--n') && x !== keep);
  if (!a || !b) throw new Error('usage: bench/render-same.ts <treeA> <treeB> [--n 1000,10000] [--keep DIR]');
  let differ = 0;
  for (const n of sizes) {
    const one = async (tree: string) => {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', import.meta.filename, '--child', resolve(tree), '--n', String(n), ...(keep ? ['--keep', resolve(keep, tree === a ? 'a' : 'b')] : [])], {
        cwd: resolve(tree), timeout: 600_000, maxBuffer: 1 << 20,
      });
      return JSON.parse(stdout.trim().split('\n').pop()!) as Rendered[];
    };
    const [ra, rb] = [await one(a), await one(b)];
    for (let i = 0; i < ra.length; i++) {
      const same = ra[i]!.sha256 === rb[i]!.sha256 && ra[i]!.checksum === rb[i]!.checksum;
      if (!same) differ++;
      process.stdout.write(`${same ? 'same   ' : 'DIFFER '} ${ra[i]!.case.padEnd(22)} ${ra[i]!.bytes} / ${rb[i]!.bytes} bytes  sha256 ${ra[i]!.sha256.slice(0, 12)} / ${rb[i]!.sha256.slice(0, 12)}  checksum ${ra[i]!.checksum.slice(0, 12)} / ${rb[i]!.checksum.slice(0, 12)}\n`);
    }
  }
  process.stdout.write(`${JSON.stringify({ render_same: differ === 0 })}\n`);
  if (differ > 0) process.exitCode = 1;
}

await main();
