// The contract between the annotation parsers (one module per group in this folder) and the
// model builder. Each group module exports its keys, its risk, and a parser from an Ingress
// (plus ConfigMap defaults) to a typed value or a precise warning.
import type { Ingress } from '../../store/kube-types.js';
import type { StoreReader } from '../../store/types.js';
import type { NginxSettings } from '../config/settings.js';
import type { CookieSessionAffinity, LocationAnnotations, ModelWarning } from '../types.js';

export type RiskLevel = 'Low' | 'Medium' | 'High' | 'Critical';

export interface AnnotationContext {
  /** --annotations-prefix, default `nginx.ingress.kubernetes.io`. */
  prefix: string;
  settings: NginxSettings;
  /** For annotations that reference other objects (auth-secret, default-backend). */
  store: StoreReader;
  /**
   * The Ingress's annotations that carry the prefix, keyed without it. parseAnnotations fills it
   * once per Ingress so that each group does not scan the annotations again.
   */
  prefixed?: Readonly<Record<string, string>>;
}

export interface CanaryConfig {
  enabled: boolean;
  weight: number;
  weightTotal: number;
  header: string;
  headerValue: string;
  headerPattern: string;
  /** canary-by-header-pattern is set but not a valid pattern: requests with the header stay on the primary. */
  headerPatternInvalid: boolean;
  cookie: string;
}

export interface AffinityConfig {
  type: '' | 'cookie';
  mode: 'balanced' | 'persistent';
  canaryBehavior: 'sticky' | 'legacy';
  cookie: Omit<CookieSessionAffinity, 'locations'>;
}

/** Everything the annotations of one Ingress say, typed and validated. */
export interface ParsedAnnotations extends LocationAnnotations {
  /** `namespace/name` of the default-backend annotation's Service, or null. */
  defaultBackendService: string | null;
  // server scope (the oldest Ingress of a host wins)
  serverSnippet: string;
  serverAliases: string[];
  fromToWWWRedirect: boolean;
  sslPassthrough: boolean;
  // backend scope
  canary: CanaryConfig;
  affinity: AffinityConfig;
  loadBalance: string;
  upstreamHashBy: { hashBy: string; subset: boolean; subsetSize: number };
  serviceUpstream: boolean;
  /**
   * Set when an annotation is invalid in a way ingress-nginx answers with 503 for the
   * Ingress's locations (e.g. auth-secret missing); the reason names the annotation.
   */
  denied: string | null;
}

export interface ParseResult {
  value: ParsedAnnotations;
  warnings: ModelWarning[];
}

/** Documentation of one annotation key. */
export interface AnnotationKeyDoc {
  /** Accepted values, e.g. `"true" or "false"`, `size (e.g. 8k)`. */
  values: string;
  /** The default, in words (`ConfigMap proxy-body-size`, `false`). */
  default: string;
  description: string;
  /** What happens on an invalid value when it is not "warning, default is used". */
  onInvalid?: string;
}

/** What each group module exports. */
export interface AnnotationGroup<K extends keyof ParsedAnnotations = keyof ParsedAnnotations> {
  /** Group name, e.g. `rewrite`, `cors`. */
  name: string;
  /** Annotation keys (without prefix) this group owns, with their risk. */
  keys: Record<string, RiskLevel>;
  /** Per-key documentation (values, default, what it does); docs/annotations.md is generated from it. */
  docs?: Record<string, AnnotationKeyDoc>;
  /** Fills this group's fields of ParsedAnnotations; reports invalid values as warnings. */
  parse(ing: Ingress, ctx: AnnotationContext, warn: (key: string, message: string) => void): Pick<ParsedAnnotations, K>;
}
