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

/** An object's keys sorted, each with its quoted prefix (`"key":`). */
interface Shape {
  keys: string[];
  quoted: string[];
}

/** Shapes by their keys in insertion order: model objects come in a few dozen shapes. */
const shapes = new Map<string, Shape>();
/** Open maps (keyed by host names, say) would add shapes without end; past this, shapes are not kept. */
const SHAPE_LIMIT = 4096;

function shapeOf(keys: string[]): Shape {
  const id = keys.join('\u0000');
  let shape = shapes.get(id);
  if (shape === undefined) {
    const sorted = keys.sort();
    shape = { keys: sorted, quoted: sorted.map((k) => `${JSON.stringify(k)}:`) };
    if (shapes.size < SHAPE_LIMIT) shapes.set(id, shape);
  }
  return shape;
}
