// The manifests source: a directory (recursive) of YAML/JSON manifests is the cluster. On
// subscribe it emits the whole state in one synchronous burst, then the per-object events that
// edits, new files and removed files amount to.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { Observable, Subject, type SchedulerLike } from 'rxjs';
import { silentLogger, type Logger } from '../log.js';
import type { SourceEvent } from '../store/events.js';
import { createManifestCluster, type ManifestCluster } from './manifests-cluster.js';
import { API_LIMITS, isManifestFile, parseManifestFile, type ManifestError, type ParseCache } from './manifests-parse.js';
import { rescanTrigger, type Notice } from './rescan-trigger.js';

export type { ManifestError };

/** A manifests file larger than this is refused unread (20 objects at the API's 1.5 MiB). */
export const MAX_MANIFEST_FILE_BYTES = 32 * 1024 * 1024;
export { endpointsToSlices, parseManifestFile } from './manifests-parse.js';

export interface ManifestsSourceOptions {
  dir: string;
  logger: Logger;
  onError?: (e: ManifestError) => void;
  /**
   * Quiet time after the last file-system notification before rescanning (default 50 ms); a
   * file renamed into place is read at once (src/streams/rescan-trigger.ts).
   */
  debounceMs?: number;
  scheduler?: SchedulerLike;
  /** Epoch ms, for creationTimestamps the manifests do not give. */
  now?: () => number;
  /** Called once, right after the initial state was emitted (also when it was empty). */
  onInitialState?: () => void;
}

/** One-shot synchronous read of a directory (the offline `render` command, model tests). */
export function readManifests(dir: string, opts: { logger?: Logger; now?: () => number } = {}): { events: SourceEvent[]; errors: ManifestError[] } {
  const errors: ManifestError[] = [];
  const logger = opts.logger ?? silentLogger();
  const scanner = createScanner(dir, createManifestCluster({ logger, now: opts.now }), logger, (e) => errors.push(e));
  const events = scanner.scan().events;
  return { events, errors };
}

export function manifestsSource(opts: ManifestsSourceOptions): Observable<SourceEvent> {
  return new Observable<SourceEvent>((subscriber) => {
    const { logger } = opts;
    const report = (e: ManifestError) => {
      logger.warn({ file: e.file, line: e.line }, `manifests: ${e.file}:${e.line}: ${e.reason}`);
      opts.onError?.(e);
    };
    const scanner = createScanner(opts.dir, createManifestCluster({ logger, now: opts.now }), logger, report);
    const notifications = new Subject<Notice>();
    const watchers = new Map<string, FSWatcher>();

    // Watchers first, so a change made while the first scan runs is not missed.
    const watchDirs = (dirs: string[]) => {
      const wanted = new Set(dirs);
      for (const [d, w] of watchers) {
        if (!wanted.has(d)) {
          w.close();
          watchers.delete(d);
        }
      }
      for (const d of wanted) {
        if (watchers.has(d)) continue;
        try {
          const w = watch(d, (event, name) => notifications.next({
            event: event === 'rename' ? 'rename' : 'change',
            path: name === null ? null : join(d, String(name)),
          }));
          w.on('error', () => {
            w.close();
            watchers.delete(d);
            notifications.next({ event: 'change', path: null });
          });
          watchers.set(d, w);
        } catch (err) {
          logger.warn({ err, dir: d }, 'manifests: cannot watch directory');
        }
      }
    };
    const emit = (events: SourceEvent[]) => {
      for (const e of events) subscriber.next(e);
    };

    watchDirs(scanner.directories());
    const first = scanner.scan();
    watchDirs(first.dirs);
    logger.info({ dir: opts.dir, objects: first.events.length }, 'manifests: initial state read');
    emit(first.events);
    opts.onInitialState?.();

    const rescans = rescanTrigger(notifications, {
      debounceMs: opts.debounceMs ?? 50,
      scheduler: opts.scheduler,
      isManifest: (path) => isManifestFile(basename(path)),
      isWhole: (path) => {
        try {
          const st = statSync(path);
          return st.isFile() && st.size > 0;
        } catch {
          return false;
        }
      },
    })
      .subscribe(() => {
        try {
          const next = scanner.scan();
          watchDirs(next.dirs);
          if (next.events.length > 0) logger.debug({ events: next.events.length }, 'manifests: changes');
          emit(next.events);
        } catch (err) {
          logger.error({ err }, 'manifests: rescan failed');
        }
      });

    return () => {
      rescans.unsubscribe();
      for (const w of watchers.values()) w.close();
      watchers.clear();
    };
  });
}

interface Scanner {
  /** Reads what changed since the last scan and returns the events it amounts to. */
  scan(): { events: SourceEvent[]; dirs: string[] };
  directories(): string[];
}

interface FileState { stamp: string; hash: string; cache: ParseCache }

function createScanner(dir: string, cluster: ManifestCluster, logger: Logger, report: (e: ManifestError) => void): Scanner {
  const known = new Map<string, FileState>();

  function scan(): { events: SourceEvent[]; dirs: string[] } {
    const { files, dirs } = walk(dir, report);
    const present = new Set<string>();
    for (const file of files) {
      present.add(file);
      let stamp: string;
      let text: string;
      try {
        const st = statSync(file);
        stamp = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
        if (known.get(file)?.stamp === stamp) continue;
        if (st.size > MAX_MANIFEST_FILE_BYTES) {
          // Not even read: its objects (if it had any) stay as they were, like a malformed file's.
          report({ file, line: 0, reason: `file is ${st.size} bytes; manifests files may hold at most ${MAX_MANIFEST_FILE_BYTES} (objects at most ${API_LIMITS.objectBytes} each, as the API server allows)` });
          const before = known.get(file);
          known.set(file, { stamp, hash: before?.hash ?? '', cache: before?.cache ?? new Map() });
          continue;
        }
        text = readFileSync(file, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
          present.delete(file); // gone between listing and reading
        } else {
          // Unreadable for now (permissions, a device error): its objects stay.
          report({ file, line: 0, reason: `cannot read file: ${(err as Error).message}` });
        }
        continue;
      }
      const hash = createHash('sha1').update(text).digest('hex');
      const before = known.get(file);
      if (before?.hash === hash) {
        known.set(file, { ...before, stamp });
        continue;
      }
      const parsed = parseManifestFile(file, text, before?.cache);
      known.set(file, { stamp, hash, cache: parsed.cache });
      for (const e of parsed.errors) report(e);
      for (const i of parsed.ignored) logger.debug({ file, line: i.line }, `manifests: ignoring ${i.what}`);
      cluster.setFile(sortKey(dir, file), parsed);
    }
    for (const file of [...known.keys()]) {
      if (present.has(file)) continue;
      known.delete(file);
      cluster.removeFile(sortKey(dir, file));
    }
    return { events: cluster.commit(), dirs };
  }

  return { scan, directories: () => walk(dir, () => {}).dirs };
}

// Files are ranked by their path relative to the directory ("the last file wins").
function sortKey(root: string, file: string): string {
  return relative(root, file);
}

/** The manifest files under a directory, as the manifests source reads them (sorted; dot-entries skipped). */
export function listManifestFiles(root: string): { files: string[]; errors: ManifestError[] } {
  const errors: ManifestError[] = [];
  return { files: walk(root, (e) => errors.push(e)).files, errors };
}

/** Manifest files (sorted) and directories under `root`; dot-entries (editor swap files, `..data`) skipped. */
function walk(root: string, report: (e: ManifestError) => void): { files: string[]; dirs: string[] } {
  const files: string[] = [];
  const dirs: string[] = [];
  const visited = new Set<string>(); // dev:ino, against symlink loops
  const visit = (d: string) => {
    try {
      const st = statSync(d);
      const id = `${st.dev}:${st.ino}`;
      if (visited.has(id)) return;
      visited.add(id);
    } catch {
      // reported by readdirSync below
    }
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch (err) {
      if (d === root) report({ file: root, line: 0, reason: `cannot read directory: ${(err as Error).message}` });
      return;
    }
    dirs.push(d);
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const p = join(d, name);
      let isDir = false;
      try {
        isDir = statSync(p).isDirectory();
      } catch {
        continue; // a dangling symlink
      }
      if (isDir) visit(p);
      else if (isManifestFile(name)) files.push(p);
    }
  };
  visit(root);
  return { files, dirs };
}
