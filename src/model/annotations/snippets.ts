// snippets group: raw NGINX configuration from the Ingress (configuration-snippet for its
// locations, server-snippet for its server). Refused unless allow-snippet-annotations is true
// and annotations-risk-level is Critical; even then a snippet is read as NGINX reads it
// (../snippet-check.ts) and refused if it leaves its block or reaches outside the Ingress.
import { InvalidValue, type Check } from '../validate.js';
import { snippetProblem } from '../snippet-check.js';
import { annotationReader, type AnnotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'configuration-snippet': 'Critical',
  'server-snippet': 'Critical',
} as const;

export const MAX_SNIPPET_LENGTH = 64 * 1024;

/** Raw NGINX directives: no NUL, bounded length, and a structure that stays in its block. */
export const snippet: Check<string> = (raw) => {
  if (raw.length > MAX_SNIPPET_LENGTH) throw new InvalidValue(`snippet is ${raw.length} characters long (at most ${MAX_SNIPPET_LENGTH})`);
  // Tabs and newlines are layout; any other control character is refused (the renderer would).
  const ctrl = /[\u0000-\u0008\u000b-\u001f\u007f]/.exec(raw);
  if (ctrl) throw new InvalidValue(`snippet contains the control character \\x${ctrl[0].charCodeAt(0).toString(16).padStart(2, '0')}`);
  const problem = snippetProblem(raw);
  if (problem) throw new InvalidValue(`snippet ${problem}`);
  return raw;
};

function readSnippet(r: AnnotationReader, allowed: boolean, key: keyof typeof keys): string {
  if (!allowed && r.has(key)) {
    r.warn(key, 'snippet annotations are not allowed (ConfigMap allow-snippet-annotations is false); ignored');
    return '';
  }
  return r.get(key, snippet, '');
}

export interface SnippetsValue {
  /** Only set when snippets are allowed; otherwise ''. */
  readonly configurationSnippet: string;
  /** Only set when snippets are allowed; otherwise ''. */
  readonly serverSnippet: string;
}

const fields = { configurationSnippet: 'location', serverSnippet: 'server' } as const;

export const snippetsGroup: AnnotationGroup<SnippetsValue, typeof fields> = {
  name: 'snippets',
  keys,
  fields,
  docs: {
    'configuration-snippet': { values: 'NGINX directives', default: "''", description: 'Directives added to each location of the Ingress.', onInvalid: 'refused (warning, empty) unless allow-snippet-annotations is true and annotations-risk-level is Critical' },
    'server-snippet': { values: 'NGINX directives', default: "''", description: "Directives added to the host's server block.", onInvalid: 'refused (warning, empty) unless allow-snippet-annotations is true and annotations-risk-level is Critical' },
  },
  perRequest: ({ configurationSnippet, serverSnippet }) => (configurationSnippet !== '' ? 'configuration-snippet is NGINX configuration'
    : serverSnippet !== '' ? 'server-snippet is NGINX configuration' : null),
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    return {
      configurationSnippet: readSnippet(r, ctx.settings.allowSnippetAnnotations, 'configuration-snippet'),
      serverSnippet: readSnippet(r, ctx.settings.allowSnippetAnnotations, 'server-snippet'),
    };
  },
};
