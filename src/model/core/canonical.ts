// Canonical serialisation of model fragments for hashing: the text fast-json-stable-stringify
// gives (keys sorted at every level), except that an object or array whose own text is between
// INLINE_LIMIT and DIGEST_LIMIT characters long appears as `#` and the SHA-1 of that text — a
// Merkle form: equal content gives equal text and different content different text, as with
// the full JSON. The digests are memoised by identity: model objects are immutable, and the
// typed annotation groups of an Ingress are shared by its locations (those of Ingresses without
// the group's annotations by every location), so a 10k-host model serialises each group object
// once instead of 24 MB of repeated JSON.
import { hash } from 'node:crypto';

const INLINE_LIMIT = 128;
/**
 * Objects with a longer text (locations, servers) are inlined rather than digested: they are
 * rarely shared, their digests would be thousands of hash calls and memo entries, and the
 * digest of the server that holds them covers them anyway.
 */
const DIGEST_LIMIT = 512;

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
  const text = Array.isArray(value) ? arrayText(value) : objectText(value as Record<string, unknown>, null);
  if (text.length <= INLINE_LIMIT || text.length > DIGEST_LIMIT) return text;
  const digest = digestOf(text);
  digests.set(value as object, digest);
  return digest;
}

/**
 * The digest (`#` + base64 SHA-1) of a value's canonical text. `overrides` replaces some of an
 * object's own fields, as if it were `{ ...value, ...overrides }` but without making (and
 * memoising) that copy.
 */
export function canonicalDigest(value: unknown, overrides?: Record<string, unknown>): string {
  if (overrides !== undefined && value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return digestOf(objectText(value as Record<string, unknown>, overrides));
  }
  const text = canonicalText(value);
  return text.charCodeAt(0) === 0x23 /* # */ ? text : digestOf(text);
}

/**
 * A value's canonical text when it is at most DIGEST_LIMIT characters long, else its digest:
 * two values have equal keys exactly when their digests are equal, without hashing the short
 * ones (a backend's few endpoints, compared at every endpoint change).
 */
export function canonicalKey(value: unknown): string {
  if (value === null || typeof value !== 'object') return canonicalText(value);
  const text = Array.isArray(value) ? arrayText(value) : objectText(value as Record<string, unknown>, null);
  return text.length <= DIGEST_LIMIT ? text : digestOf(text);
}

const digestOf = (text: string) => `#${hash('sha1', text, 'base64')}`;

function arrayText(list: unknown[]): string {
  let text = '[';
  for (let i = 0; i < list.length; i++) text += (i === 0 ? '' : ',') + canonicalText(list[i]);
  return `${text}]`;
}

function objectText(record: Record<string, unknown>, overrides: Record<string, unknown> | null): string {
  const shape = shapeOf(Object.keys(record));
  let text = '{';
  let first = true;
  for (let i = 0; i < shape.keys.length; i++) {
    const key = shape.keys[i]!;
    const v = overrides !== null && Object.hasOwn(overrides, key) ? overrides[key] : record[key];
    if (v === undefined) continue;
    text += (first ? shape.quoted[i]! : `,${shape.quoted[i]!}`) + canonicalText(v);
    first = false;
  }
  return `${text}}`;
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
