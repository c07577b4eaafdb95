// NGINX's verdict on a configuration sent with SIGHUP, read from the master's reload log. The
// master checks the new file itself and keeps running the old one when it refuses it, but says
// so only in its log: "reconfiguring", then the errors, and nothing marks the end. A signal it
// merely logs (SIGIO) sent after "reconfiguring" is handled only once the master waits for
// signals again, so that line, after "reconfiguring", says the attempt is over.
import { closeSync, fstatSync, openSync, readSync, truncateSync } from 'node:fs';

export interface ReloadLogLine { level: string; pid: number; message: string }

/** The master's lines after an offset, as far as they tell the outcome of one SIGHUP. */
export interface ReloadVerdict {
  /** The master has begun reading the new configuration. */
  reconfiguring: boolean;
  /** The master is back waiting for signals: its attempt is over, taken or refused. */
  settled: boolean;
  /** Its errors since "reconfiguring", in `nginx -t`'s words (`nginx: [emerg] … in FILE:LINE`). */
  errors: string[];
}

/** A line as NGINX writes it: `2026/11/25 02:59:09 [emerg] 13102#13102: message`. */
const LINE = /^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \[(\w+)\] (\d+)#\d+: (.*)$/;

export function parseReloadLog(text: string): ReloadLogLine[] {
  const out: ReloadLogLine[] = [];
  for (const raw of text.split('\n')) {
    const m = LINE.exec(raw);
    if (m) out.push({ level: m[1]!, pid: Number(m[2]), message: m[3]! });
  }
  return out;
}

export function reloadVerdict(lines: ReloadLogLine[], masterPid: number): ReloadVerdict {
  let reconfiguring = false;
  let settled = false;
  const errors: string[] = [];
  for (const l of lines) {
    if (l.pid !== masterPid) continue;
    if (!reconfiguring) {
      reconfiguring = l.message === 'reconfiguring';
      continue;
    }
    // Signal handlers run only while the master waits in sigsuspend (it blocks them otherwise).
    if (/^signal \d+ \(SIG\w+\) received/.test(l.message)) settled = true;
    else if (!settled && /^(emerg|alert|crit)$/.test(l.level)) errors.push(`nginx: [${l.level}] ${l.message}`);
  }
  return { reconfiguring, settled, errors };
}

/** Above this size the log is emptied before a reload (NGINX appends; only we read it). */
const TRUNCATE_AT = 1 << 20;

export interface ReloadLog {
  /** Where the next reload's lines will start. */
  mark(): number;
  /** The lines written since `offset`. */
  since(offset: number): ReloadLogLine[];
}

export function openReloadLog(path: string): ReloadLog {
  const size = (): number => {
    try {
      const fd = openSync(path, 'r');
      try { return fstatSync(fd).size; } finally { closeSync(fd); }
    } catch {
      return 0;
    }
  };
  return {
    mark() {
      const now = size();
      if (now < TRUNCATE_AT) return now;
      try {
        truncateSync(path, 0);
        return 0;
      } catch {
        return now;
      }
    },
    since(offset) {
      let fd: number;
      try { fd = openSync(path, 'r'); } catch { return []; }
      try {
        const length = fstatSync(fd).size - offset;
        if (length <= 0) return [];
        const buf = Buffer.alloc(Math.min(length, TRUNCATE_AT));
        const n = readSync(fd, buf, 0, buf.length, offset);
        const text = buf.toString('utf8', 0, n);
        // A line still being written is read next time.
        return parseReloadLog(text.slice(0, text.lastIndexOf('\n') + 1));
      } finally {
        closeSync(fd);
      }
    },
  };
}
