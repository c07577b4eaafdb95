// nginx.conf's own text (everything but the server blocks) rendered by liquidjs once per set of
// inputs: after one Ingress changed only the checksum in it is new, and liquidjs takes
// milliseconds for the main template, a large part of a one-server render at 10k.
import { randomBytes } from 'node:crypto';

// `{{ checksum }}` or `{{ checksum | lua_str: '…' }}`: outputs that print the value itself
// (a hex digest needs no escaping in a Lua string).
const PRINTED = /^\{\{-?\s*checksum\s*(?:\|\s*lua_str\s*(?::\s*'[^'{}]*'\s*)?)?-?\}\}$/;
const LIQUID = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g;

/**
 * Whether a template reads the checksum only to print it, so that its text with a stand-in
 * digest, the stand-in replaced, is its text with the real one. A template that tests, slices or
 * filters it otherwise is rendered every time.
 */
export function printsChecksumOnly(source: string): boolean {
  for (const [tag] of source.matchAll(LIQUID)) {
    if (/\bchecksum\b/.test(tag) && !PRINTED.test(tag)) return false;
  }
  return true;
}

export interface MainTextCache {
  /**
   * The main template's text for `scope` (as JSON, the rest of what the template reads keyed by
   * `ctxKey`) and `checksum`; `render` is liquidjs, called with the digest to print.
   */
  render(ctxKey: string, scope: object, checksum: string, printedOnly: boolean, render: (checksum: string) => string): string;
  /** How many times liquidjs rendered the main template (for tests and debug output). */
  rendered(): number;
}

export function createMainTextCache(): MainTextCache {
  // Random per cache, so that no text an Ingress or the ConfigMap put in nginx.conf can hold it.
  const standIn = randomBytes(32).toString('hex');
  let last: { ctxKey: string; scope: string; text: string } | null = null;
  let rendered = 0;
  return {
    render(ctxKey, scope, checksum, printedOnly, render) {
      if (!printedOnly) {
        rendered++;
        return render(checksum);
      }
      const key = JSON.stringify(scope);
      if (last === null || last.ctxKey !== ctxKey || last.scope !== key) {
        rendered++;
        last = { ctxKey, scope: key, text: render(standIn) };
      }
      return last.text.replaceAll(standIn, checksum);
    },
    rendered: () => rendered,
  };
}
