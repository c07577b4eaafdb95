// The cluster that a directory of manifests stands for: which file holds which object, which
// objects were emitted, and the add/update/delete events that take the emitted state to what
// the files now say — with the uid, resourceVersion and creationTimestamp a cluster would give.
import stableStringify from 'fast-json-stable-stringify';
import type { Logger } from '../log.js';
import { STORED_KINDS, type StoredKind, type SourceEvent } from '../store/events.js';
import type { KubeObject } from '../store/kube-types.js';
import { stableUid, type ManifestObject, type ParsedFile } from './manifests-parse.js';

export interface ManifestCluster {
  /** Sets what a file holds now. A file with errors keeps the objects it held before. */
  setFile(file: string, parsed: ParsedFile): void;
  removeFile(file: string): void;
  /** The events since the last commit: adds and updates in STORED_KINDS order, then deletes in reverse. */
  commit(): SourceEvent[];
}

// The canonical text of an object is computed only when there is something to compare it
// with, so the first read of a large directory does not serialise every object.
interface Held { obj: ManifestObject; canon?: string }
interface Emitted { kind: StoredKind; key: string; object: KubeObject; held: Held }

function canonOf(held: Held): string {
  return (held.canon ??= stableStringify(held.obj.object));
}

function sameContent(a: Held, b: Held): boolean {
  return a === b || a.obj.object === b.obj.object || canonOf(a) === canonOf(b);
}

const KIND_ORDER = new Map<string, number>(STORED_KINDS.map((k, i) => [k, i]));

/** `now` gives epoch ms; creation timestamps have a cluster's one-second resolution. */
export function createManifestCluster(opts: { logger: Logger; now?: () => number }): ManifestCluster {
  const now = opts.now ?? Date.now;
  const files = new Map<string, Map<string, Held>>();
  const holders = new Map<string, Set<string>>();
  const emitted = new Map<string, Emitted>();
  const firstSeen = new Map<string, string>();
  const dirty = new Set<string>();
  let resourceVersion = 0;

  function hold(id: string, file: string): void {
    let set = holders.get(id);
    if (!set) holders.set(id, (set = new Set()));
    set.add(file);
  }

  function release(id: string, file: string): void {
    const set = holders.get(id);
    set?.delete(file);
    if (set?.size === 0) holders.delete(id);
  }

  function setFile(file: string, parsed: ParsedFile): void {
    const before = files.get(file) ?? new Map<string, Held>();
    // "Bad input loses nothing": a broken document may be the one that held an object.
    const after = parsed.errors.length > 0 ? new Map(before) : new Map<string, Held>();
    const seen = new Map<string, ManifestObject>();
    for (const obj of parsed.objects) {
      const id = `${obj.kind}\0${obj.key}`;
      const prev = seen.get(id);
      seen.set(id, obj);
      if (prev) {
        opts.logger.warn({ file, kind: obj.kind, key: obj.key, lines: [prev.line, obj.line] }, 'manifests: object defined twice in one file; the later document wins');
      }
      const old = before.get(id);
      const held: Held = { obj };
      after.set(id, old && sameContent(old, held) ? old : held);
    }
    for (const [id, held] of before) {
      if (after.get(id) !== held) dirty.add(id);
      if (!after.has(id)) release(id, file);
    }
    for (const [id, held] of after) {
      if (before.get(id) !== held) dirty.add(id);
      hold(id, file);
    }
    files.set(file, after);
  }

  function removeFile(file: string): void {
    const before = files.get(file);
    if (!before) return;
    for (const id of before.keys()) {
      release(id, file);
      dirty.add(id);
    }
    files.delete(file);
  }

  function winner(id: string): Held | undefined {
    const set = holders.get(id);
    if (!set || set.size === 0) return undefined;
    const sorted = [...set].sort();
    const last = sorted[sorted.length - 1]!;
    const held = files.get(last)!.get(id)!;
    if (sorted.length > 1) {
      opts.logger.warn({ kind: held.obj.kind, key: held.obj.key, files: sorted, winner: last }, 'manifests: object defined in several files; the last file wins');
    }
    return held;
  }

  function withDefaults(id: string, obj: ManifestObject): KubeObject {
    const meta = obj.object.metadata;
    let created = meta.creationTimestamp ?? firstSeen.get(id);
    if (!created) {
      created = new Date(Math.floor(now() / 1000) * 1000).toISOString().replace(/\.000Z$/, 'Z');
      firstSeen.set(id, created);
    }
    return {
      ...obj.object,
      metadata: {
        ...meta,
        uid: meta.uid ?? stableUid(obj.kind, obj.key),
        resourceVersion: String(++resourceVersion),
        creationTimestamp: created,
      },
    };
  }

  function commit(): SourceEvent[] {
    const changes: SourceEvent[] = [];
    const deletes: SourceEvent[] = [];
    for (const id of dirty) {
      const held = winner(id);
      const prev = emitted.get(id);
      if (!held) {
        if (prev) {
          deletes.push({ kind: prev.kind, type: 'delete', key: prev.key, object: prev.object });
          emitted.delete(id);
        }
        firstSeen.delete(id);
        continue;
      }
      if (prev && sameContent(prev.held, held)) continue;
      const { kind, key } = held.obj;
      const object = withDefaults(id, held.obj);
      emitted.set(id, { kind, key, object, held });
      changes.push(prev
        ? { kind, type: 'update', key, object, old: prev.object }
        : { kind, type: 'add', key, object });
    }
    dirty.clear();
    const order = (e: SourceEvent) => KIND_ORDER.get(e.kind) ?? 0;
    changes.sort((a, b) => order(a) - order(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    deletes.sort((a, b) => order(b) - order(a) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return [...changes, ...deletes];
  }

  return { setFile, removeFile, commit };
}
