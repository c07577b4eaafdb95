// When the manifests source rescans its directory after file-system notifications. A file
// renamed into place is whole (what kubectl-like tools, `bench/`, and most editors' atomic saves
// do), so it is read at once; a file written in place may be read half-written (an editor's
// truncate-then-write), so any burst that holds such a write waits for the quiet time.
import { Observable, asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';

/** One file-system notification: Node's `fs.watch` event type and the entry's path. */
export interface Notice {
  event: 'rename' | 'change';
  /** The entry's full path, or null when the watcher could not name it. */
  path: string | null;
}

export interface RescanTriggerOptions {
  /** Quiet time after the last notification before a rescan (the burst's fallback). */
  debounceMs: number;
  scheduler?: SchedulerLike;
  /** Whether a notification's entry is one the scan reads (a manifests file). */
  isManifest: (path: string) => boolean;
  /** Whether the entry is now a non-empty regular file (asked when the prompt rescan is due). */
  isWhole: (path: string) => boolean;
}

/**
 * Emits once per rescan due. A burst whose notifications on manifests files are all renames of
 * files that exist whole rescans at once (on the scheduler with no delay, so notifications read
 * in the same batch are seen first); any other burst (a write in place, a removal, an
 * unnamed notification) rescans after `debounceMs` of quiet. Notifications on other entries
 * (a temporary file written before its rename, directories, `..data`) only restart the quiet time.
 */
export function rescanTrigger(notices: Observable<Notice>, opts: RescanTriggerOptions): Observable<'prompt' | 'quiet'> {
  const scheduler = opts.scheduler ?? asyncScheduler;
  return new Observable<'prompt' | 'quiet'>((subscriber) => {
    let quiet: Subscription | undefined;
    let prompt: Subscription | undefined;
    /** Manifests files renamed in this burst; null once the burst holds anything else on one. */
    let renamed: Set<string> | null = new Set();
    const fire = (how: 'prompt' | 'quiet') => {
      quiet?.unsubscribe();
      prompt?.unsubscribe();
      quiet = prompt = undefined;
      renamed = new Set();
      subscriber.next(how);
    };
    const sub = notices.subscribe({
      next: (n) => {
        quiet?.unsubscribe();
        quiet = scheduler.schedule(() => fire('quiet'), opts.debounceMs);
        if (n.path !== null && !opts.isManifest(n.path)) return;
        if (n.event !== 'rename' || n.path === null) {
          renamed = null;
          return;
        }
        if (renamed === null) return;
        renamed.add(n.path);
        prompt ??= scheduler.schedule(() => {
          prompt = undefined;
          if (renamed !== null && [...renamed].every(opts.isWhole)) fire('prompt');
        }, 0);
      },
      error: (err) => subscriber.error(err),
      complete: () => subscriber.complete(),
    });
    return () => {
      sub.unsubscribe();
      quiet?.unsubscribe();
      prompt?.unsubscribe();
    };
  });
}
