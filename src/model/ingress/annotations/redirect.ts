// redirect group: permanent-redirect(-code), temporal-redirect(-code), from-to-www-redirect,
// relative-redirects. A temporal redirect wins over a permanent one, as in ingress-nginx.
import { bool, int, InvalidValue, safeStringWithVariables, url, type Check } from '../../checks/validate.js';
import { redirectStaticReason } from '../../checks/redirect-url.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'permanent-redirect': 'Medium',
  'permanent-redirect-code': 'Low',
  'temporal-redirect': 'Medium',
  'temporal-redirect-code': 'Low',
  'from-to-www-redirect': 'Low',
  'relative-redirects': 'Low',
} as const;

const redirectCode = int(300, 308);
const httpUrl = url(['http', 'https']);

/** A permanent redirect may also be a path on the same host, as ingress-nginx takes it. */
const urlOrPath: Check<string> = (raw) => {
  const v = raw.trim();
  if (!v.startsWith('/') || v.startsWith('//')) return httpUrl(raw);
  if (/[\s"'\\<>^`{|}]/.test(v)) throw new InvalidValue('a redirect path may not hold white space, quotes, backslashes or <>^`{|}');
  return safeStringWithVariables(v);
};

export interface RedirectConfig {
  readonly url: string;
  readonly code: number;
}

export interface RedirectValue {
  readonly redirect: RedirectConfig | null;
  readonly fromToWWWRedirect: boolean;
  /** absolute_redirect off: redirects NGINX issues keep a relative Location. */
  readonly relativeRedirects: boolean;
}

const fields = { redirect: 'location', fromToWWWRedirect: 'server', relativeRedirects: 'location' } as const;

export const redirectGroup: AnnotationGroup<RedirectValue, typeof fields> = {
  name: 'redirect',
  keys,
  fields,
  docs: {
    'permanent-redirect': { values: 'http(s) URL or a path (NGINX variables allowed)', default: "''", description: 'Answer every request of the location with a permanent redirect to this URL.' },
    'permanent-redirect-code': { values: '300-308', default: '301', description: 'Status code of the permanent redirect.' },
    'temporal-redirect': { values: 'http(s) URL (NGINX variables allowed)', default: "''", description: 'Answer with a temporary redirect to this URL; wins over permanent-redirect.' },
    'temporal-redirect-code': { values: '300-308', default: '302', description: 'Status code of the temporary redirect.' },
    'from-to-www-redirect': { values: '"true" or "false"', default: 'false', description: 'Redirect between `www.host` and `host`.' },
    'relative-redirects': { values: '"true" or "false"', default: 'ConfigMap relative-redirects', description: 'Redirects NGINX issues (a redirect path, a directory\'s slash) keep a relative Location (absolute_redirect off).' },
  },
  perRequest: ({ redirect, fromToWWWRedirect }) => (fromToWWWRedirect ? 'from-to-www-redirect needs a server block for the other name'
    : redirectStaticReason(redirect)),
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const temporal = r.get('temporal-redirect', httpUrl, '');
    const temporalCode = r.get('temporal-redirect-code', redirectCode, 302);
    const permanent = r.get('permanent-redirect', urlOrPath, '');
    const permanentCode = r.get('permanent-redirect-code', redirectCode, 301);
    const redirect = temporal !== '' ? { url: temporal, code: temporalCode }
      : permanent !== '' ? { url: permanent, code: permanentCode }
        : null;
    return {
      redirect,
      fromToWWWRedirect: r.get('from-to-www-redirect', bool, false),
      relativeRedirects: r.get('relative-redirects', bool, ctx.settings.relativeRedirects),
    };
  },
};
