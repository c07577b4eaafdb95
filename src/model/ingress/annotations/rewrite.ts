// rewrite group: rewrite-target, use-regex, app-root, ssl-redirect, force-ssl-redirect,
// preserve-trailing-slash, x-forwarded-prefix, and use-port-in-redirects (the port in the SSL
// redirect and in the redirects NGINX issues).
import { bool, InvalidValue, MAX_VALUE_LENGTH, uriPath, type Check } from '../../checks/validate.js';
import { REDIRECT_VARIABLE, rewriteStaticReason } from '../../checks/redirect-url.js';
import { annotationReader } from './reader.js';
import { pathUnderAny } from './site.js';
import type { AnnotationGroup } from './types.js';

/** A rewrite target: a URI (or absolute URL) whose only `$` are regex capture references ($1). */
export const rewriteTarget: Check<string> = (raw) => {
  const v = raw.trim();
  if (v.length > MAX_VALUE_LENGTH) throw new InvalidValue(`value is ${v.length} characters long (at most ${MAX_VALUE_LENGTH})`);
  const withoutCaptures = v.replace(/\$\d{1,2}/g, '');
  if (!/^[A-Za-z0-9\-._~/:?=&%+,@!*()]*$/.test(withoutCaptures)) {
    throw new InvalidValue('rewrite-target may hold only URI characters and capture references like $1');
  }
  return v;
};

/**
 * x-forwarded-prefix: a path, which may name the location's regex captures (`/$1`) and request
 * variables, as ingress-nginx's quoted header value expands them.
 */
export const forwardedPrefix: Check<string> = (raw) => {
  const v = raw.trim();
  if (v.length > MAX_VALUE_LENGTH) throw new InvalidValue(`value is ${v.length} characters long (at most ${MAX_VALUE_LENGTH})`);
  for (const m of v.matchAll(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g)) {
    if (!REDIRECT_VARIABLE.test(m[1] ?? m[2]!)) throw new InvalidValue(`$${m[1] ?? m[2]} is not a variable of the request (e.g. $host, $http_x_prefix) or a capture ($1)`);
  }
  const rest = v.replace(/\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*|[1-9])/g, '');
  if (!/^[A-Za-z0-9\-._~/:]*$/.test(rest)) throw new InvalidValue('x-forwarded-prefix may hold only path characters, variables and captures like $1');
  return v;
};

const keys = {
  'rewrite-target': 'Medium',
  'use-regex': 'Low',
  'app-root': 'Medium',
  'ssl-redirect': 'Low',
  'force-ssl-redirect': 'Medium',
  'preserve-trailing-slash': 'Medium',
  'x-forwarded-prefix': 'Medium',
  'use-port-in-redirects': 'Low',
} as const;

export interface RewriteConfig {
  /** '' when no rewrite-target. */
  readonly target: string;
  readonly useRegex: boolean;
  readonly appRoot: string;
  readonly sslRedirect: boolean;
  readonly forceSSLRedirect: boolean;
  readonly preserveTrailingSlash: boolean;
  readonly xForwardedPrefix: string;
  readonly usePortInRedirects: boolean;
}

export interface RewriteValue {
  readonly rewrite: RewriteConfig;
}

const fields = { rewrite: 'location' } as const;

export const rewriteGroup: AnnotationGroup<RewriteValue, typeof fields> = {
  name: 'rewrite',
  keys,
  fields,
  docs: {
    'rewrite-target': { values: 'URI, may use capture references ($1)', default: "''", description: 'Target URI the matched path is rewritten to; turns on regex matching for the host.' },
    'use-regex': { values: '"true" or "false"', default: 'false', description: 'Treat the Ingress paths as regular expressions (host-wide).' },
    'app-root': { values: 'URI path', default: "''", description: 'Redirect requests for `/` to this path.' },
    'ssl-redirect': { values: '"true" or "false"', default: 'ConfigMap ssl-redirect', description: 'Redirect HTTP to HTTPS when the host has TLS.' },
    'force-ssl-redirect': { values: '"true" or "false"', default: 'ConfigMap force-ssl-redirect', description: 'Redirect HTTP to HTTPS even without TLS on the Ingress.' },
    'preserve-trailing-slash': { values: '"true" or "false"', default: 'ConfigMap preserve-trailing-slash', description: 'Keep the trailing slash in the URI of the SSL redirect.' },
    'use-port-in-redirects': { values: '"true" or "false"', default: 'ConfigMap use-port-in-redirects', description: 'Name the port in redirects NGINX issues (port_in_redirect) and in the SSL redirect.' },
    'x-forwarded-prefix': { values: 'URI path; regex captures (`$1`) and request variables allowed', default: "''", description: 'Value of the X-Forwarded-Prefix header sent upstream.' },
  },
  perRequest: ({ rewrite: rw }) => rewriteStaticReason(rw.target)
    ?? (rw.xForwardedPrefix.includes('$') ? 'an x-forwarded-prefix with captures or variables needs the location\'s proxy_set_header' : null),
  atLocation: {
    // no-tls-redirect-locations (default: ACME challenges) are never redirected to HTTPS.
    rewrite: (rewrite, site) => (pathUnderAny(site.path, site.settings.noTLSRedirectLocations)
      ? { ...rewrite, sslRedirect: false, forceSSLRedirect: false } : rewrite),
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    return {
      rewrite: {
        target: r.get('rewrite-target', rewriteTarget, ''),
        useRegex: r.get('use-regex', bool, false),
        appRoot: r.get('app-root', uriPath, ''),
        sslRedirect: r.get('ssl-redirect', bool, ctx.settings.sslRedirect),
        forceSSLRedirect: r.get('force-ssl-redirect', bool, ctx.settings.forceSSLRedirect),
        preserveTrailingSlash: r.get('preserve-trailing-slash', bool, ctx.settings.preserveTrailingSlash),
        xForwardedPrefix: r.get('x-forwarded-prefix', forwardedPrefix, ''),
        usePortInRedirects: r.get('use-port-in-redirects', bool, ctx.settings.usePortInRedirects),
      },
    };
  },
};
