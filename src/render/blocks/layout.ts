// How directives are laid out inside a location block: one per line at the location body's
// indent. Shared by the blocks and the location frame so every block prints the same way.

/** The indent of a location body. */
export const I = '            ';

/** Directives (without `;`), one per line at the location body's indent. */
export function directives(ds: readonly string[]): string {
  let out = '';
  for (const d of ds) out += `${I}${d};\n`;
  return out;
}

export { escapeRegex } from '../../model/checks/pcre.js';

/** What a block returns when a location needs nothing of that kind (one shared object: renders allocate enough). */
export const NONE: readonly never[] = Object.freeze([]);
