// Where each object of a manifest file is, down to the line of one of its fields: the model names
// a field as `spec.rules[0].http.paths[1].path` or `metadata.annotations["a/b"]`, and `lint`
// reports it as `file:line`. Items of a `List` (a `kubectl get -o yaml` dump) get their own lines.
import { LineCounter, isMap, isScalar, isSeq, parseAllDocuments, type Node, type YAMLMap } from 'yaml';

const CLUSTER_SCOPED = new Set(['Namespace', 'IngressClass']);

export interface ObjectLocation {
  file: string;
  /** 1-based line where the object starts. */
  line: number;
  /** The line of a field (as the model names fields); the deepest part found, else the object's line. */
  lineOf(field: string): number;
}

/** `kind\0namespace/name` (or `kind\0name` when cluster-scoped, namespace `default` when not given), as the manifests source keys objects. */
export function locationKey(kind: string, key: string): string {
  return `${kind}\0${key}`;
}

/** Every object with kind and name in the file's documents (and in their `items` for a List). */
export function locateObjects(file: string, text: string): Map<string, ObjectLocation> {
  const out = new Map<string, ObjectLocation>();
  const lines = new LineCounter();
  let docs;
  try {
    docs = parseAllDocuments(text, { lineCounter: lines });
  } catch {
    return out;
  }
  const lineAt = (n: Node | null | undefined, fallback: number) => (n?.range ? lines.linePos(n.range[0]).line : fallback);
  const visit = (node: unknown) => {
    if (isSeq(node)) {
      for (const item of node.items) visit(item);
      return;
    }
    if (!isMap(node)) return;
    const kind = scalar(node, 'kind');
    const items = node.get('items', true);
    if (kind?.endsWith('List') && isSeq(items)) {
      for (const item of items.items) visit(item);
      return;
    }
    const meta = node.get('metadata', true);
    const name = isMap(meta) ? scalar(meta, 'name') : undefined;
    if (!kind || !name) return;
    const ns = isMap(meta) ? scalar(meta, 'namespace') : undefined;
    const key = CLUSTER_SCOPED.has(kind) ? name : `${ns || 'default'}/${name}`;
    const line = lineAt(node as Node, 0);
    out.set(locationKey(kind, key), { file, line, lineOf: (field) => fieldLine(node, field, line, lineAt) });
  };
  for (const doc of Array.isArray(docs) ? docs : [docs]) visit(doc.contents);
  return out;
}

function scalar(map: YAMLMap, key: string): string | undefined {
  const v = map.get(key, true);
  return isScalar(v) && (typeof v.value === 'string' || typeof v.value === 'number') ? String(v.value) : undefined;
}

/** `a.b[0]["c/d"]` → ['a', 'b', 0, 'c/d']. */
export function fieldPath(field: string): Array<string | number> {
  const out: Array<string | number> = [];
  const re = /([^.[\]"]+)|\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]/g;
  for (let m = re.exec(field); m; m = re.exec(field)) {
    if (m[1] !== undefined) out.push(m[1]);
    else if (m[2] !== undefined) out.push(Number(m[2]));
    else out.push(m[3]!.replace(/\\(.)/g, '$1'));
  }
  return out;
}

function fieldLine(root: YAMLMap, field: string, fallback: number, lineAt: (n: Node | null | undefined, f: number) => number): number {
  let node: unknown = root;
  let line = fallback;
  for (const part of fieldPath(field)) {
    if (typeof part === 'number' && isSeq(node)) {
      const item = node.items[part];
      if (item === undefined) break;
      line = lineAt(item as Node, line);
      node = item;
    } else if (typeof part === 'string' && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === part);
      if (!pair) break;
      line = lineAt(pair.key as Node, line);
      node = pair.value;
    } else {
      break;
    }
  }
  return line;
}
