// Where a worker thread's module is: compiled next to its starter, or (running from source under
// tsx) the TypeScript one through tsx's loader.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** A worker running `./<name>.js` (or `.ts` under tsx) next to the module at `base`. */
export function startWorker(base: string, name: string, options: WorkerOptions): Worker {
  const compiled = new URL(`./${name}.js`, base);
  if (existsSync(fileURLToPath(compiled))) return new Worker(compiled, options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const source = new URL(`./${name}.ts`, base).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(source)}); });`, { ...options, eval: true });
}

/** Asks a worker to close (`ask` posts it the message) and waits for it to exit; one that does not within 5 s is terminated. */
export async function stopWorker(worker: Worker, ask: () => void): Promise<void> {
  const gone = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  ask();
  const timer = setTimeout(() => void worker.terminate(), 5_000);
  await gone;
  clearTimeout(timer);
}
