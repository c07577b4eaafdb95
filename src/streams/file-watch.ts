// File watchers that turn changes of files the store does not hold into non-skippable tasks:
// the NGINX template (`template-change`) and the GeoIP databases (`file-change`). A change is a
// change of content: a touch is not one, and an editor that replaces the file by renaming a new
// one over it is watched through the directory, so the watch survives it.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, watch } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Observable, Subject, asyncScheduler, debounceTime, type SchedulerLike } from 'rxjs';
import type { Logger } from '../log.js';
import type { Task } from '../store/events.js';

export interface FileWatchOptions {
  logger: Logger;
  /** Quiet time after the last notification before looking at the files (default 50 ms). */
  debounceMs?: number;
  scheduler?: SchedulerLike;
}

/** Emits `template-change` (detail: the path) whenever the template's content changes. */
export function templateWatcher(path: string, opts: FileWatchOptions): Observable<Task> {
  return watchDirectory(dirname(path), (name) => name === null || name === basename(path), opts, () => {
    let last = contentHash(path);
    return () => {
      const now = contentHash(path);
      if (now === undefined) {
        opts.logger.warn({ path }, 'template watcher: template is missing; keeping the last one');
        return [];
      }
      if (now === last) {
        opts.logger.debug({ path }, 'template watcher: content unchanged');
        return [];
      }
      last = now;
      opts.logger.info({ path }, 'template changed');
      return [{ kind: 'task', task: 'template-change', detail: path }];
    };
  });
}

/** Emits `file-change` (detail: the file) for each `.mmdb` file in `dir` added, changed or removed. */
export function geoipWatcher(dir: string, opts: FileWatchOptions): Observable<Task> {
  const isDatabase = (name: string) => name.endsWith('.mmdb') && !name.startsWith('.');
  return watchDirectory(dir, (name) => name === null || isDatabase(name), opts, () => {
    // Stamps spare hashing a large database that a notification did not concern.
    const known = new Map<string, { stamp: string; hash: string }>();
    const look = (): Map<string, { stamp: string; hash: string }> => {
      const seen = new Map<string, { stamp: string; hash: string }>();
      let names: string[] = [];
      try {
        names = readdirSync(dir).filter(isDatabase).sort();
      } catch {
        // The directory is gone: every database it held is removed.
      }
      for (const name of names) {
        const file = join(dir, name);
        const stamp = fileStamp(file);
        if (stamp === undefined) continue;
        const before = known.get(file);
        const hash = before?.stamp === stamp ? before.hash : contentHash(file);
        if (hash !== undefined) seen.set(file, { stamp, hash });
      }
      return seen;
    };
    for (const [file, state] of look()) known.set(file, state);
    return () => {
      const now = look();
      const changed: string[] = [];
      for (const [file, state] of now) if (known.get(file)?.hash !== state.hash) changed.push(file);
      for (const file of known.keys()) if (!now.has(file)) changed.push(file);
      known.clear();
      for (const [file, state] of now) known.set(file, state);
      if (changed.length === 0) opts.logger.debug({ dir }, 'GeoIP watcher: content unchanged');
      return changed.map((file) => {
        opts.logger.info({ file }, 'GeoIP database changed');
        return { kind: 'task', task: 'file-change', detail: file } satisfies Task;
      });
    };
  });
}

/**
 * Watches a directory; after each debounced burst of notifications that `concerns`, calls the
 * checker made by `start` (at subscribe time) and emits the tasks it returns.
 */
function watchDirectory(
  dir: string,
  concerns: (name: string | null) => boolean,
  opts: FileWatchOptions,
  start: () => () => Task[],
): Observable<Task> {
  return new Observable<Task>((subscriber) => {
    const notifications = new Subject<void>();
    const check = start();
    let watcher: ReturnType<typeof watch> | undefined;
    try {
      watcher = watch(dir, (_event, name) => {
        if (concerns(name === null ? null : String(name))) notifications.next();
      });
      watcher.on('error', (err) => opts.logger.warn({ err, dir }, 'file watcher failed'));
    } catch (err) {
      opts.logger.warn({ err, dir }, 'cannot watch directory');
    }
    const sub = notifications
      .pipe(debounceTime(opts.debounceMs ?? 50, opts.scheduler ?? asyncScheduler))
      .subscribe(() => {
        try {
          for (const task of check()) subscriber.next(task);
        } catch (err) {
          opts.logger.error({ err, dir }, 'file watcher check failed');
        }
      });
    return () => {
      sub.unsubscribe();
      watcher?.close();
    };
  });
}

function contentHash(file: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

function fileStamp(file: string): string | undefined {
  try {
    const st = statSync(file);
    return st.isFile() ? `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` : undefined;
  } catch {
    return undefined;
  }
}
