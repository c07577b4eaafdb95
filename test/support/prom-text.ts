// Reads the Prometheus text exposition format: families (HELP, TYPE) and samples with their
// labels, label values unescaped. Strict: a line it cannot read throws, so a malformed
// exposition fails the test that reads it.
export interface PromSample { name: string; labels: Record<string, string>; value: number }
export interface PromFamily { name: string; help: string; type: string; samples: PromSample[] }

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/;

function labelsOf(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('="', i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = text.slice(i, eq);
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name)) throw new Error(`bad label name ${name} in: ${line}`);
    let j = eq + 2;
    let value = '';
    while (j < text.length && text[j] !== '"') {
      if (text[j] === '\\') {
        const c = text[j + 1];
        value += c === 'n' ? '\n' : c === '\\' ? '\\' : c === '"' ? '"' : (() => { throw new Error(`bad escape in: ${line}`); })();
        j += 2;
      } else {
        value += text[j++];
      }
    }
    if (text[j] !== '"') throw new Error(`unterminated label value in: ${line}`);
    if (name in labels) throw new Error(`duplicate label ${name} in: ${line}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
  }
  return labels;
}

export function parsePromText(text: string): Map<string, PromFamily> {
  const families = new Map<string, PromFamily>();
  let current: PromFamily | null = null;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      current = families.get(name) ?? { name, help: '', type: 'untyped', samples: [] };
      families.set(name, current);
      if (kind === 'HELP') current.help = rest;
      else current.type = rest;
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const name = m[1]!;
    const value = Number(m[4]!.replace(/^Nan$/i, 'NaN').replace(/^\+Inf$/, 'Infinity').replace(/^-Inf$/, '-Infinity'));
    const base = current && (name === current.name || name.startsWith(`${current.name}_`)) ? current : null;
    if (!base) throw new Error(`sample ${name} outside its family`);
    base.samples.push({ name, labels: m[3] ? labelsOf(m[3], line) : {}, value });
  }
  return families;
}

/** The samples named `name` whose labels include `match`. */
export function samples(families: Map<string, PromFamily>, name: string, match: Record<string, string> = {}): PromSample[] {
  const out: PromSample[] = [];
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)) out.push(s);
    }
  }
  return out;
}
