// Reads a log written by the recorder: checks the header's format and version, and turns each
// line back into a pipeline input with its time. A truncated last line (the recorder was killed
// mid-write) is tolerated; a malformed line anywhere else is an error naming its line number.
import { readFileSync } from 'node:fs';
import { STORED_KINDS, type PipelineInput } from '../store/events.js';
import type { KubeObject } from '../store/kube-types.js';
import { RECORD_FORMAT, RECORD_FORMAT_VERSION, isRecordedTask, type RecordEntry, type RecordHeader } from './record.js';

export class ReplayLogError extends Error {
  constructor(message: string, readonly line?: number) {
    super(message);
    this.name = 'ReplayLogError';
  }
}

export interface TimedInput {
  /** ms since the log's start. */
  t: number;
  input: PipelineInput;
}

export interface ReplayLog {
  header: RecordHeader;
  entries: TimedInput[];
  /** Problems that did not stop the replay (a truncated last line). */
  warnings: string[];
}

const KINDS = new Set<string>(STORED_KINDS);
const TASKS = new Set(['template-change', 'file-change', 'configmap-change', 'nginx-restart', 'retry', 'initial-sync']);

function checkHeader(value: unknown, file: string): RecordHeader {
  const h = value as Partial<RecordHeader> | null;
  if (!h || typeof h !== 'object' || h.format !== RECORD_FORMAT) {
    throw new ReplayLogError(`${file}:1: not an ingress-rx record log (the header's "format" is not "${RECORD_FORMAT}")`, 1);
  }
  if (typeof h.version !== 'number' || !Number.isInteger(h.version) || h.version < 1) {
    throw new ReplayLogError(`${file}:1: the header has no valid "version"`, 1);
  }
  if (h.version > RECORD_FORMAT_VERSION) {
    throw new ReplayLogError(
      `${file}: record format version ${h.version} is newer than this ingress-rx reads (${RECORD_FORMAT_VERSION}); ` +
      `replay it with ingress-rx ${h.ingressRx ?? 'of the version that recorded it'} or newer`, 1);
  }
  if (!h.store || typeof h.store !== 'object') throw new ReplayLogError(`${file}:1: the header has no "store" options`, 1);
  return h as RecordHeader;
}

function toInput(e: RecordEntry, where: string): TimedInput {
  if (typeof e !== 'object' || e === null || typeof e.t !== 'number' || !(e.t >= 0)) {
    throw new ReplayLogError(`${where}: an entry needs a time "t" ≥ 0`);
  }
  if (isRecordedTask(e)) {
    if (!TASKS.has(e.task)) throw new ReplayLogError(`${where}: unknown task "${String(e.task)}"`);
    return { t: e.t, input: e.detail === undefined ? { kind: 'task', task: e.task } : { kind: 'task', task: e.task, detail: e.detail } };
  }
  if (!KINDS.has(e.kind)) throw new ReplayLogError(`${where}: unknown kind "${String(e.kind)}"`);
  if (e.type !== 'add' && e.type !== 'update' && e.type !== 'delete') throw new ReplayLogError(`${where}: unknown event type "${String(e.type)}"`);
  const object = e.object as KubeObject | undefined;
  if (typeof e.key !== 'string' || !object || typeof object !== 'object' || !object.metadata) {
    throw new ReplayLogError(`${where}: an event needs "key" and an "object" with metadata`);
  }
  return { t: e.t, input: { kind: e.kind, type: e.type, key: e.key, object } };
}

/** Parses a whole log held in memory (`file` names it in messages). */
export function parseReplayLog(text: string, file = 'log'): ReplayLog {
  const lines = text.split('\n');
  const endsWithNewline = text.endsWith('\n');
  if (endsWithNewline) lines.pop();
  if (lines.length === 0 || lines[0]!.trim() === '') throw new ReplayLogError(`${file}: empty log (no header line)`, 1);

  let header: RecordHeader;
  try {
    header = checkHeader(JSON.parse(lines[0]!), file);
  } catch (err) {
    if (err instanceof ReplayLogError) throw err;
    throw new ReplayLogError(`${file}:1: the header line is not JSON (${(err as Error).message})`, 1);
  }

  const entries: TimedInput[] = [];
  const warnings: string[] = [];
  let last = 0;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const lineNo = i + 1;
    if (line.trim() === '') continue;
    let parsed: RecordEntry;
    try {
      parsed = JSON.parse(line) as RecordEntry;
    } catch (err) {
      if (i === lines.length - 1 && !endsWithNewline) {
        warnings.push(`${file}:${lineNo}: the last line is truncated (${line.length} bytes); ignored`);
        break;
      }
      throw new ReplayLogError(`${file}:${lineNo}: malformed line (${(err as Error).message})`, lineNo);
    }
    const entry = toInput(parsed, `${file}:${lineNo}`);
    // Times never go back: the recorder stamps lines in the order it receives them.
    if (entry.t < last) entry.t = last;
    last = entry.t;
    entries.push(entry);
  }
  return { header, entries, warnings };
}

export function readReplayLog(file: string): ReplayLog {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ReplayLogError(`${file}: cannot read (${(err as Error).message})`);
  }
  return parseReplayLog(text, file);
}
