// Canonical serialisation of model fragments for hashing: the text fast-json-stable-stringify
// gives (keys sorted at every level), except that every object or array whose own text is longer
// than INLINE_LIMIT appears as `#` and the sha1 of that text — a Merkle form: equal content gives
// equal text and different content different text, as with the full JSON. The digests are
// memoised by identity: model objects are immutable, and the typed annotation groups of an
// Ingress are shared by its locations (those of Ingresses without the group's annotations by
// every location), so a 10k-host model serialises each group object once and a server as the
// digests of its locations, a fraction of its full JSON.
import { hash } from 'node:crypto';

const INLINE_LIMIT = 64;

const digests = new WeakMap<object, string>();

export function canonicalText(value: unknown): string {
  switch (typeof value) {
    case 'string': return JSON.stringify(value);
    case 'number': return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean': return value ? 'true' : 'false';
    case 'object': if (value !== null) break; return 'null';
    default: return 'null';
  }
  const known = digests.get(value as object);
  if (known !== undefined) return known;
  let text: string;
  if (Array.isArray(value)) {
    text = '[';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + canonicalText(value[i]);
    text += ']';
  } else {
    const record = value as Record<string, unknown>;
    const shape = shapeOf(Object.keys(record));
    text = '{';
    let first = true;
    for (let i = 0; i < shape.keys.length; i++) {
      const v = record[shape.keys[i]!];
      if (v === undefined) continue;
      text += (first ? shape.quoted[i]! : `,${shape.quoted[i]!}`) + canonicalText(v);
      first = false;
    }
    text += '}';
  }
  if (text.length <= INLINE_LIMIT) return text;
  const digest = `#${hash('sha1', text, 'base64')}`;
  digests.set(value as object, digest);
  return digest;
}

/** An object's keys sorted, each with its quoted prefix (`"key":`), and the insertion order it was made for. */
interface Shape {
  order: string[];
  keys: string[];
  quoted: string[];
}

/**
 * The shapes seen last, most recent first. Model objects come in a few dozen shapes and mostly
 * follow each other (location after location), and property names are interned strings, so
 * comparing an object's keys with a recent shape's is cheaper than sorting them.
 */
const recent: Shape[] = [];
const RECENT = 24;

function shapeOf(keys: string[]): Shape {
  for (let s = 0; s < recent.length; s++) {
    const shape = recent[s]!;
    if (sameKeys(shape.order, keys)) {
      if (s > 0) { recent.splice(s, 1); recent.unshift(shape); }
      return shape;
    }
  }
  const keysSorted = keys.slice().sort();
  const shape = { order: keys, keys: keysSorted, quoted: keysSorted.map((k) => `${JSON.stringify(k)}:`) };
  recent.unshift(shape);
  if (recent.length > RECENT) recent.pop();
  return shape;
}

function sameKeys(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
