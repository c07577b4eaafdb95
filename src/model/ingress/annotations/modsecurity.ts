// modsecurity group: the ModSecurity web application firewall for the Ingress's locations, with
// or without the OWASP Core Rule Set, as ingress-nginx applies these annotations over the ConfigMap
// keys enable-modsecurity / enable-owasp-modsecurity-crs. modsecurity-snippet is a tenant's own
// rules: Critical, refused unless snippets are allowed, and read as a subset of SecLang that acts
// only on the tenant's own requests (../../checks/seclang.ts).
import { RulesProblem, rulesChunks, tenantRulesProblem, unquoteNginx } from '../../checks/seclang.js';
import { bool, InvalidValue, type Check } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'enable-modsecurity': 'Low',
  'enable-owasp-core-rules': 'Low',
  'modsecurity-transaction-id': 'High',
  'modsecurity-snippet': 'Critical',
} as const;

export interface ModSecurityConfig {
  /** enable-modsecurity; null when the annotation is absent or invalid (the ConfigMap decides). */
  readonly enable: boolean | null;
  /** enable-owasp-core-rules. */
  readonly owaspRules: boolean;
  /** modsecurity-transaction-id: an NGINX variable expression, or ''. */
  readonly transactionId: string;
  /** modsecurity-snippet as ModSecurity reads it, in pieces NGINX takes as one parameter each. */
  readonly rules: readonly string[];
}

export interface ModSecurityValue {
  /** null when the Ingress sets none of the modsecurity annotations. */
  readonly modsecurity: ModSecurityConfig | null;
}

const fields = { modsecurity: 'location' } as const;

export const MAX_MODSECURITY_SNIPPET = 64 * 1024;

/** As ingress-nginx's NGINXVariable check, and `$` must start a variable name (`$name` or `${name}`). */
export const transactionId: Check<string> = (raw) => {
  const v = raw.trim();
  if (v.length > 256 || !/^[A-Za-z0-9_$\-{}]*$/.test(v)) throw new InvalidValue('must be letters, digits, -, _ and NGINX variables ($name or ${name})');
  const rest = v.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*/g, '');
  if (/[${}]/.test(rest)) throw new InvalidValue('`$` must start an NGINX variable name ($name or ${name}) and braces belong to ${name}');
  // Braces only where a name character follows (NGINX would read a longer name).
  return v.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}(?![A-Za-z0-9_])/g, '$$$1');
};

/** A tenant's ModSecurity rules, written as for ingress-nginx (inside NGINX single quotes). */
export const tenantRules: Check<readonly string[]> = (raw) => {
  if (raw.length > MAX_MODSECURITY_SNIPPET) throw new InvalidValue(`snippet is ${raw.length} characters long (at most ${MAX_MODSECURITY_SNIPPET})`);
  try {
    const text = unquoteNginx(raw);
    const problem = tenantRulesProblem(text);
    if (problem) throw new InvalidValue(problem);
    return rulesChunks(text);
  } catch (err) {
    if (err instanceof RulesProblem) throw new InvalidValue(err.message);
    throw err;
  }
};

export const modsecurityGroup: AnnotationGroup<ModSecurityValue, typeof fields> = {
  name: 'modsecurity',
  keys,
  fields,
  // The ConfigMap's ModSecurity is http-level and covers the router's location too; an Ingress's own is a location's.
  perRequest: ({ modsecurity }) => (modsecurity === null ? null : 'enable-modsecurity needs modsecurity directives in a location'),
  docs: {
    'enable-modsecurity': { values: '"true" or "false"', default: 'ConfigMap enable-modsecurity', description: 'ModSecurity for the locations of the Ingress (`false`: off even when the ConfigMap turns it on); loads the base configuration (detection only, as ingress-nginx).' },
    'enable-owasp-core-rules': { values: '"true" or "false"', default: 'false', description: "The OWASP Core Rule Set (Debian's modsecurity-crs) in the Ingress's locations, where ModSecurity is on." },
    'modsecurity-transaction-id': { values: 'letters, digits, -, _ and NGINX variables', default: "''", description: "ModSecurity's transaction id (its unique_id in logs), e.g. `$request_id`." },
    'modsecurity-snippet': {
      values: 'ModSecurity directives, written as for ingress-nginx (`\\\'` for a quote)', default: "''",
      description: "ModSecurity rules for the Ingress's locations (replacing the base configuration there, as ingress-nginx). Directives that read or write files, fetch URLs, run scripts or change what every Ingress shares are refused (docs/security.md).",
      onInvalid: 'refused (warning, no rules) unless allow-snippet-annotations is true and annotations-risk-level is Critical; a refused directive refuses the snippet',
    },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    if (!r.has('enable-modsecurity') && !r.has('enable-owasp-core-rules') && !r.has('modsecurity-transaction-id') && !r.has('modsecurity-snippet')) return { modsecurity: null };
    let rules: readonly string[] = [];
    if (r.has('modsecurity-snippet')) {
      if (ctx.settings.allowSnippetAnnotations) rules = r.get('modsecurity-snippet', tenantRules, []);
      else r.warn('modsecurity-snippet', 'snippet annotations are not allowed (ConfigMap allow-snippet-annotations is false); ignored');
    }
    const enable = r.read('enable-modsecurity', bool);
    return {
      modsecurity: {
        enable: enable.state === 'ok' ? enable.value : null,
        owaspRules: r.get('enable-owasp-core-rules', bool, false),
        transactionId: r.get('modsecurity-transaction-id', transactionId, ''),
        rules,
      },
    };
  },
};
