// Reads NGINX's metrics log as it grows and hands over its complete lines. When the file grows
// past a size it is rotated without losing a line: renamed, then SIGUSR1 to the master (NGINX
// flushes its buffers and reopens its logs), and the old file is read to its end before it is
// deleted. How far the reader may fall behind is bounded: a larger backlog is skipped, and counted.
import { open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { setImmediate as yieldToLoop } from 'node:timers/promises';

export interface MetricsLogReaderOptions {
  path: string;
  masterPid: () => number | null;
  onLines(lines: string[]): void;
  onSkipped(bytes: number): void;
  rotateBytes?: number;
  maxBacklogBytes?: number;
  /** How long the old file is still read after NGINX was told to reopen its logs. */
  drainMs?: number;
  now?: () => number;
}

export interface MetricsLogReader {
  /** Reads what was written since the last call. */
  poll(): Promise<void>;
  /** A last poll, then closes (and deletes) the files. */
  close(): Promise<void>;
}

interface Tail { fh: FileHandle; ino: number; offset: number; remainder: string }

const CHUNK = 4 * 1024 * 1024;
const MAX_LINE = 64 * 1024;
const LINES_PER_TURN = 5000;

export function createMetricsLogReader(opts: MetricsLogReaderOptions): MetricsLogReader {
  const rotateBytes = opts.rotateBytes ?? 32 * 1024 * 1024;
  const maxBacklog = opts.maxBacklogBytes ?? 64 * 1024 * 1024;
  const drainMs = opts.drainMs ?? 5000;
  const now = opts.now ?? Date.now;
  const oldPath = `${opts.path}.1`;
  let current: Tail | null = null;
  let old: (Tail & { until: number }) | null = null;
  let running: Promise<void> | null = null;

  async function openTail(path: string): Promise<Tail | null> {
    try {
      const fh = await open(path, 'r');
      return { fh, ino: (await fh.stat()).ino, offset: 0, remainder: '' };
    } catch {
      return null;
    }
  }

  /** Reads t up to its current end and hands over the complete lines. */
  async function drain(t: Tail): Promise<number> {
    const size = (await t.fh.stat()).size;
    if (size < t.offset) { t.offset = 0; t.remainder = ''; }
    if (size - t.offset > maxBacklog) {
      opts.onSkipped(size - t.offset);
      t.offset = size;
      t.remainder = '';
    }
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, size - t.offset)));
    while (t.offset < size) {
      const { bytesRead } = await t.fh.read(buf, 0, Math.min(buf.length, size - t.offset), t.offset);
      if (bytesRead === 0) break;
      t.offset += bytesRead;
      // NGINX escapes every byte outside printable ASCII in log lines: chunks split cleanly.
      const text = t.remainder + buf.toString('latin1', 0, bytesRead);
      const end = text.lastIndexOf('\n');
      if (end < 0) {
        t.remainder = text.length > MAX_LINE ? '' : text;
        continue;
      }
      t.remainder = text.length - end - 1 > MAX_LINE ? '' : text.slice(end + 1);
      const lines = text.slice(0, end).split('\n');
      for (let i = 0; i < lines.length; i += LINES_PER_TURN) {
        opts.onLines(i === 0 && lines.length <= LINES_PER_TURN ? lines : lines.slice(i, i + LINES_PER_TURN));
        if (lines.length > LINES_PER_TURN) await yieldToLoop();
      }
    }
    return size;
  }

  async function pollOnce(): Promise<void> {
    if (old) {
      const before = old.offset;
      await drain(old);
      // Deleted only once no worker writes to it any more: a worker that could not reopen the
      // log (a prefix it cannot reach) goes on writing there.
      if (now() >= old.until && old.offset === before) {
        await old.fh.close();
        await rm(oldPath, { force: true });
        old = null;
      } else if (now() >= old.until) {
        old.until = now() + drainMs;
      }
    }
    const onDisk = await stat(opts.path).catch(() => null);
    if (current && onDisk && onDisk.ino !== current.ino && !old) {
      // Replaced behind our back (a new NGINX master after the file was removed): finish the old one.
      await drain(current);
      await current.fh.close();
      current = null;
    }
    current ??= onDisk ? await openTail(opts.path) : null;
    if (!current) return;
    const size = await drain(current);
    const master = opts.masterPid();
    if (size >= rotateBytes && !old && master !== null) {
      await rename(opts.path, oldPath);
      old = { ...current, until: now() + drainMs };
      current = null;
      try { process.kill(master, 'SIGUSR1'); } catch { /* NGINX is restarting: it opens a new file */ }
    }
  }

  return {
    poll() {
      running ??= pollOnce().finally(() => { running = null; });
      return running;
    },
    async close() {
      await running;
      if (old) { await drain(old); await old.fh.close(); old = null; }
      if (current) { await drain(current); await current.fh.close(); current = null; }
      await rm(oldPath, { force: true });
      await rm(opts.path, { force: true });
    },
  };
}
