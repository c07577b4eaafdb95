// Deterministic, readable JSON for files people diff (render output, golden fixtures): object
// keys sorted, two-space indentation, trailing newline.

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}

export function stableJSON(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}
