// The contract between the annotation groups (one module per group in this folder) and the rest
// of the controller. A group module is the group end to end on the model side: its keys and
// their risk, their documentation, the parser from an Ingress (plus ConfigMap defaults) to a
// typed value or a precise warning, the model fields that value fills and their scope, any
// per-location adjustment, and the annotations that name Secrets. Its NGINX directives are its
// render block, src/render/blocks/<group>.ts.
import type { Ingress } from '../../../store/kube-types.js';
import type { StoreReader } from '../../../store/types.js';
import type { NginxSettings } from '../../core/config/settings.js';
import type { AddressPolicy } from '../../checks/address-policy.js';

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
  /** The upstream address policy, for annotations that name hosts to dial (mirror-target); strict when absent. */
  addressPolicy?: AddressPolicy;
}

/**
 * Where a field of the model applies: `location` fields are copied onto every Location of the
 * Ingress (each location its own Ingress's values); `server` fields are taken by the host's
 * server from its oldest Ingress that sets them; `backend` fields by the backend from the first
 * Ingress that uses it, cookie affinity from the paths that set it (src/model/ingress/backend-plans.ts;
 * the Lua balancer applies them per request, from the backends payload).
 */
export type FieldScope = 'location' | 'server' | 'backend';

/** Where one location of an Ingress is: what a group's per-location adjustment may look at. */
export interface LocationSite {
  /** The path NGINX matches (after the Prefix split). */
  path: string;
  settings: NginxSettings;
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

/**
 * Set by a group when an annotation is invalid in a way ingress-nginx answers with 503 for the
 * Ingress's locations (e.g. auth-secret missing); the reason names the annotation. The first
 * group (in ANNOTATION_GROUPS order) to deny names the reason.
 */
export interface Denial {
  denied?: string | null;
}

/** The scope of each field of a group's value. */
export type FieldScopes<V> = { readonly [F in keyof V]-?: FieldScope };

/**
 * What each group module exports. `V` is the group's value (its fields of ParsedAnnotations),
 * `S` the literal scope of each field (`typeof fields`), from which the model's
 * LocationAnnotations type is derived: a new group adds its fields to the model by itself.
 */
export interface AnnotationGroup<V extends object = object, S extends FieldScopes<V> = FieldScopes<V>> {
  /** Group name, e.g. `rewrite`, `cors`; also the name of its render block. */
  name: string;
  /** Annotation keys (without prefix) this group owns, with their risk. */
  keys: Readonly<Record<string, RiskLevel>>;
  /** Per-key documentation (values, default, what it does); docs/annotations.md is generated from it. */
  docs?: Readonly<Record<string, AnnotationKeyDoc>>;
  /** The model fields the value fills, and the scope of each. */
  fields: S;
  /**
   * Keys (of `keys`) whose value names a Secret, `name` or `namespace/name`: the store indexes
   * them so that a change to the Secret rebuilds the Ingresses that use it.
   */
  secrets?: readonly string[];
  /** Keys (of `keys`) whose value names a ConfigMap the same way: the store indexes them likewise. */
  configMaps?: readonly string[];
  /** Fills this group's fields; reports invalid values as warnings. */
  parse(ing: Ingress, ctx: AnnotationContext, warn: (key: string, message: string) => void): V & Denial;
  /**
   * A location-scoped field's value on one location, where it is not the parsed value as it is
   * (e.g. no-tls-redirect-locations lifts the SSL redirect under its paths).
   */
  atLocation?: { readonly [F in keyof V]?: (value: V[F], site: LocationSite) => V[F] };
  /**
   * Whether the Lua router can apply this value per request, exactly as the group's NGINX
   * directives would (dynamic routes, src/model/ingress/dynamic-routes.ts): null when it can, else why
   * not, naming the annotation ("auth-url needs an NGINX subrequest"). A group that does not
   * declare it keeps every Ingress that sets one of its keys in a server block of its own.
   */
  perRequest?(value: V, settings: NginxSettings): string | null;
}
