// Kubernetes label selectors in their string form (`k=v,k2!=v,k3 in (a,b),k4 notin (c),!k5,k6`),
// parsed once and evaluated against an object's labels. Used for --watch-namespace-selector.

export type Requirement =
  | { op: 'exists' | 'not-exists'; key: string }
  | { op: 'in' | 'notin'; key: string; values: string[] };

export interface LabelSelector {
  readonly requirements: readonly Requirement[];
  matches(labels: Record<string, string> | undefined): boolean;
}

/** Parses a selector; '' selects everything. Throws an Error naming the bad term. */
export function parseLabelSelector(text: string): LabelSelector {
  const requirements = splitTerms(text).map(parseTerm);
  return {
    requirements,
    matches: (labels) => requirements.every((r) => satisfies(r, labels ?? {})),
  };
}

function satisfies(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  switch (r.op) {
    case 'exists': return has;
    case 'not-exists': return !has;
    case 'in': return has && r.values.includes(labels[r.key]!);
    case 'notin': return !has || !r.values.includes(labels[r.key]!);
  }
}

// Commas separate terms, except inside the parentheses of a set.
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      terms.push(text.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(text.slice(start));
  const trimmed = terms.map((t) => t.trim());
  if (trimmed.length === 1 && trimmed[0] === '') return [];
  return trimmed;
}

const KEY = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

function parseTerm(term: string): Requirement {
  if (term === '') throw new Error('label selector: empty term');
  let m = /^!\s*(\S+)$/.exec(term);
  if (m) return { op: 'not-exists', key: checkKey(m[1]!, term) };
  m = /^(\S+?)\s+(in|notin)\s*\(([^()]*)\)$/.exec(term);
  if (m) {
    const values = m[3]!.split(',').map((v) => checkValue(v.trim(), term));
    return { op: m[2] as 'in' | 'notin', key: checkKey(m[1]!, term), values };
  }
  m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (m) {
    const values = [checkValue(m[3]!, term)];
    return { op: m[2] === '!=' ? 'notin' : 'in', key: checkKey(m[1]!, term), values };
  }
  if (!/\s/.test(term)) return { op: 'exists', key: checkKey(term, term) };
  throw new Error(`label selector: cannot parse term "${term}"`);
}

function checkKey(key: string, term: string): string {
  if (!KEY.test(key) || key.length > 317) throw new Error(`label selector: invalid key "${key}" in "${term}"`);
  return key;
}

function checkValue(value: string, term: string): string {
  if (!VALUE.test(value) || value.length > 63) throw new Error(`label selector: invalid value "${value}" in "${term}"`);
  return value;
}
