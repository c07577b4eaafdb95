// Files that may hold what came from Secrets, readable by their owner only; and an append-only
// line writer for the recorder and the tracer on top of them: lines are queued in memory and
// handed to the file stream only while it accepts more, so a slow disk grows the queue instead
// of stalling the pipeline, and a write error (a full disk) is reported once, never thrown.
import { closeSync, createWriteStream, fchmodSync, fstatSync, openSync, writeSync, type WriteStream } from 'node:fs';

/**
 * Recordings and traces are readable by their owner only (a recording made with --record-secrets
 * holds keys, and any log names the cluster's objects): created 0600, and an existing file that was
 * more open is narrowed before anything is written to it.
 */
export function openPrivate(file: string): number {
  const fd = openSync(file, 'w', 0o600);
  try {
    // Only a regular file: a device such as /dev/full keeps its mode.
    if (fstatSync(fd).isFile()) fchmodSync(fd, 0o600);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

/** Writes a whole file readable by its owner only (replay and render outputs: payloads hold certificates, and keys when recorded). */
export function writePrivateFile(file: string, text: string): void {
  const fd = openPrivate(file);
  try {
    const buf = Buffer.from(text, 'utf8');
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
  } finally {
    closeSync(fd);
  }
}

export interface LineWriter {
  /** Queues one line (without its newline). Discarded after a failure. */
  write(line: string): void;
  /** Writes what is queued, then `tail` (if any), and closes; resolves even after an error. */
  close(tail?: string): Promise<void>;
  readonly failed: boolean;
  /** Lines lost to a write error. */
  readonly lost: number;
}

/**
 * `sync: true` writes with blocking calls in chunks of about 64 KiB: for runs that never yield
 * to the event loop (replay in virtual time), where an async stream would hold everything.
 */
export function createLineWriter(file: string, onError: (err: Error) => void, opts: { sync?: boolean } = {}): LineWriter {
  if (opts.sync) return createSyncLineWriter(file, onError);
  const queue: string[] = [];
  let lost = 0;
  let failed = false;
  let waitingForDrain = false;
  let flushScheduled = false;
  let stream: WriteStream | null;
  try {
    stream = createWriteStream(file, { fd: openPrivate(file) });
  } catch (err) {
    // Reported once, as a failed write would be: the caller never sees a throw.
    stream = null;
    failed = true;
    queueMicrotask(() => onError(err as Error));
  }

  const fail = (err: Error) => {
    if (failed) return;
    failed = true;
    lost += queue.length;
    queue.length = 0;
    onError(err);
  };
  // A chunk handed to the stream that then fails is lost as a whole.
  const lostOnError = (lines: number) => (err?: Error | null) => { if (err) lost += lines; };
  stream?.on('error', fail);
  stream?.on('drain', () => { waitingForDrain = false; flush(); });

  function flush(): void {
    if (failed || !stream || waitingForDrain || queue.length === 0) return;
    const chunk = queue.join('\n') + '\n';
    const lines = queue.length;
    queue.length = 0;
    if (!stream.write(chunk, lostOnError(lines))) waitingForDrain = true;
  }

  return {
    write(line) {
      if (failed || !stream) { lost++; return; }
      queue.push(line);
      // One write per turn of the event loop: a synchronous burst becomes one chunk.
      if (!flushScheduled) {
        flushScheduled = true;
        queueMicrotask(() => { flushScheduled = false; flush(); });
      }
    },
    close(tail) {
      return new Promise<void>((resolve) => {
        const s = stream;
        if (!s) return resolve();
        stream = null;
        if (!failed) {
          const rest = queue.join('\n') + (queue.length > 0 ? '\n' : '') + (tail ?? '');
          const lines = queue.length;
          queue.length = 0;
          if (rest) s.write(rest, lostOnError(lines));
        }
        if (s.closed) return resolve();
        // 'close' comes after 'error' or 'finish', so a failure is counted before this resolves.
        s.once('close', () => resolve());
        s.end();
      });
    },
    get failed() { return failed; },
    get lost() { return lost; },
  };
}

const SYNC_CHUNK = 64 * 1024;

function createSyncLineWriter(file: string, onError: (err: Error) => void): LineWriter {
  let fd: number | null = null;
  let failed = false;
  let lost = 0;
  let pending: string[] = [];
  let pendingBytes = 0;

  const fail = (err: Error) => {
    if (failed) return;
    failed = true;
    lost += pending.length;
    pending = [];
    onError(err);
  };
  const writeOut = (text: string) => {
    try {
      if (fd !== null) writeSync(fd, text);
    } catch (err) {
      fail(err as Error);
    }
  };
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending.join('\n') + '\n';
    pending = [];
    pendingBytes = 0;
    writeOut(text);
  };
  try {
    fd = openPrivate(file);
  } catch (err) {
    fail(err as Error);
  }

  return {
    write(line) {
      if (failed || fd === null) { lost++; return; }
      pending.push(line);
      pendingBytes += line.length + 1;
      if (pendingBytes >= SYNC_CHUNK) flush();
    },
    close(tail) {
      if (fd !== null) {
        if (!failed) flush();
        if (!failed && tail) writeOut(tail);
        try { closeSync(fd); } catch { /* already reported */ }
        fd = null;
      }
      return Promise.resolve();
    },
    get failed() { return failed; },
    get lost() { return lost; },
  };
}
