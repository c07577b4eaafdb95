// Reads one group's annotations from an Ingress: applies the prefix, the risk limit and the
// word blocklist, runs the key's check, and reports every rejected value through `warn`.
import type { Ingress } from '../../../store/kube-types.js';
import { blockedWord, InvalidValue, type Check } from '../../checks/validate.js';
import type { AnnotationContext, RiskLevel } from './types.js';

const RISK_ORDER: Record<RiskLevel, number> = { Low: 0, Medium: 1, High: 2, Critical: 3 };

export function riskAllowed(risk: RiskLevel, limit: RiskLevel): boolean {
  return RISK_ORDER[risk] <= RISK_ORDER[limit];
}

/** The outcome of reading one annotation. Invalid readings have already been warned about. */
export type Reading<T> =
  | { state: 'absent' }
  | { state: 'ok'; value: T }
  | { state: 'invalid'; message: string };

const ABSENT: Reading<never> = Object.freeze({ state: 'absent' });

/**
 * Reads one group's keys from an Ingress. A class rather than closures: it is created for every
 * group of every Ingress on each model build, so it must cost next to nothing.
 */
export class AnnotationReader {
  /** This Ingress's annotations with the prefix, by key without it. */
  private readonly values: Readonly<Record<string, string>>;

  constructor(
    ing: Ingress,
    private readonly ctx: AnnotationContext,
    private readonly keys: Readonly<Record<string, RiskLevel>>,
    private readonly report: (key: string, message: string) => void,
  ) {
    this.values = ctx.prefixed ?? prefixedAnnotations(ing, ctx.prefix);
  }

  /** Reads and checks a key. */
  read<T>(key: string, check: Check<T>): Reading<T> {
    if (!this.permitted(key)) return ABSENT;
    const raw = this.raw(key) as string;
    const word = blockedWord(raw, this.ctx.settings.annotationValueWordBlocklist);
    if (word !== undefined) {
      const message = `value contains "${word}", which annotation-value-word-blocklist forbids`;
      this.report(key, message);
      return { state: 'invalid', message };
    }
    try {
      return { state: 'ok', value: check(raw) };
    } catch (err) {
      if (!(err instanceof InvalidValue)) throw err;
      this.report(key, err.message);
      return { state: 'invalid', message: err.message };
    }
  }

  /** Reads and checks a key; absent or invalid gives the fallback. */
  get<T>(key: string, check: Check<T>, fallback: T): T {
    const r = this.read(key, check);
    return r.state === 'ok' ? r.value : fallback;
  }

  /** Whether the key is set (and allowed by the risk limit); never warns. */
  has(key: string): boolean {
    return this.raw(key) !== undefined && riskAllowed(this.keys[key] ?? 'Critical', this.ctx.settings.annotationsRiskLevel);
  }

  /** Reports a problem with a key's value (as a warning). */
  warn(key: string, message: string): void {
    this.report(key, message);
  }

  private raw(key: string): string | undefined {
    return Object.hasOwn(this.values, key) ? this.values[key] : undefined;
  }

  private permitted(key: string): boolean {
    const risk = this.keys[key];
    if (risk === undefined) throw new Error(`annotation key ${key} is not declared by its group`);
    // A key above the risk limit is named once for the Ingress by parseAnnotations.
    return this.raw(key) !== undefined && riskAllowed(risk, this.ctx.settings.annotationsRiskLevel);
  }
}

/** The annotations carrying `prefix/`, keyed without it. */
export function prefixedAnnotations(ing: Ingress, prefix: string): Record<string, string> {
  const values: Record<string, string> = {};
  const start = `${prefix}/`;
  const all = ing.metadata.annotations;
  for (const k in all) if (k.startsWith(start)) values[k.slice(start.length)] = asText(all[k]);
  return values;
}

/**
 * A key naming an Ingress's namespace and `prefix/` annotations (as prefixedAnnotations reads
 * them), equal for two Ingresses only when both are: each annotation goes in as its length, its
 * name and its text's length and text, so no two sets spell one key. Made without the map and
 * its JSON, once per Ingress in a full build.
 */
export function prefixedAnnotationsKey(ing: Ingress, prefix: string): string {
  const start = `${prefix}/`;
  const all = ing.metadata.annotations;
  let key = ing.metadata.namespace ?? '';
  for (const k in all) {
    if (!k.startsWith(start)) continue;
    const text = asText(all[k]);
    key += `\n${k.length - start.length}:${k.slice(start.length)}${text.length}:${text}`;
  }
  return key;
}

/** A hand-written manifest may hold an unquoted number or boolean; anything else fails its check. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

export function annotationReader(
  ing: Ingress,
  ctx: AnnotationContext,
  keys: Readonly<Record<string, RiskLevel>>,
  warn: (key: string, message: string) => void,
): AnnotationReader {
  return new AnnotationReader(ing, ctx, keys, warn);
}
