// The registry of annotation groups: runs every group over an Ingress and assembles
// ParsedAnnotations (the defaults, an Ingress without annotations, come from the ConfigMap
// settings), and derives from the groups' declarations the model's annotation types, the shared
// settings object of location-scoped fields each Location holds, and the annotations that name Secrets.
import type { Ingress } from '../../../store/kube-types.js';
import { DEFAULT_ANNOTATIONS_PREFIX } from '../../../store/store.js';
import type { AnnotationReferences, StoreReader } from '../../../store/types.js';
import type { NginxSettings } from '../../core/config/settings.js';
import type { ModelWarning } from '../../core/warning.js';
import { accessLogGroup } from './accesslog.js';
import { affinityGroup } from './affinity.js';
import { authBasicGroup } from './authbasic.js';
import { authExternalGroup } from './authexternal.js';
import { authTLSGroup } from './authtls.js';
import { backendProtocolGroup } from './backendprotocol.js';
import { canaryGroup } from './canary.js';
import { connectionGroup } from './connection.js';
import { corsGroup } from './cors.js';
import { customHeadersGroup } from './customheaders.js';
import { customHttpErrorsGroup } from './customhttperrors.js';
import { defaultBackendGroup } from './defaultbackend.js';
import { fastcgiGroup } from './fastcgi.js';
import { http2PushPreloadGroup } from './http2pushpreload.js';
import { ipAllowlistGroup } from './ipallowlist.js';
import { ipDenylistGroup } from './ipdenylist.js';
import { loadBalanceGroup } from './loadbalance.js';
import { mirrorGroup } from './mirror.js';
import { modsecurityGroup } from './modsecurity.js';
import { opentelemetryGroup } from './opentelemetry.js';
import { proxyGroup } from './proxy.js';
import { proxySSLGroup } from './proxyssl.js';
import { rateLimitGroup } from './ratelimit.js';
import { redirectGroup } from './redirect.js';
import { rewriteGroup } from './rewrite.js';
import { satisfyGroup } from './satisfy.js';
import { serverAliasGroup } from './serveralias.js';
import { serviceUpstreamGroup } from './serviceupstream.js';
import { snippetsGroup } from './snippets.js';
import { sslCipherGroup } from './sslcipher.js';
import { sslPassthroughGroup } from './sslpassthrough.js';
import { prefixedAnnotations, riskAllowed } from './reader.js';
import type { AnnotationContext, AnnotationGroup, FieldScope, LocationSite, RiskLevel } from './types.js';
import { upstreamHashGroup } from './upstreamhash.js';
import { upstreamVhostGroup } from './upstreamvhost.js';
import { unsupportedAnnotationMessage } from '../../core/refused.js';

export { DEFAULT_ANNOTATIONS_PREFIX };

/** Every group, in the order they run (the first group to deny names the reason). */
const GROUPS = [
  rewriteGroup, redirectGroup, serverAliasGroup, sslPassthroughGroup, sslCipherGroup, snippetsGroup,
  authBasicGroup, authExternalGroup, authTLSGroup, ipAllowlistGroup, ipDenylistGroup, satisfyGroup, rateLimitGroup,
  corsGroup, proxyGroup, proxySSLGroup, upstreamVhostGroup, backendProtocolGroup, fastcgiGroup, connectionGroup,
  customHttpErrorsGroup, defaultBackendGroup, accessLogGroup, mirrorGroup, customHeadersGroup, http2PushPreloadGroup, modsecurityGroup, opentelemetryGroup,
  canaryGroup, affinityGroup, loadBalanceGroup, upstreamHashGroup, serviceUpstreamGroup,
] as const;

/** The groups, typed as the contract (each group's own value type is known through GROUPS). */
export const ANNOTATION_GROUPS: readonly AnnotationGroup[] = GROUPS as unknown as readonly AnnotationGroup[];

type Group = (typeof GROUPS)[number];
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
type ValueOf<G> = G extends AnnotationGroup<infer V, infer _S> ? V : never;
type FieldsIn<G, Scope extends FieldScope> = G extends AnnotationGroup<infer V, infer S>
  ? { readonly [F in keyof V as S[F] extends Scope ? F : never]: V[F] } : never;

/** Everything the annotations of one Ingress say, typed and validated: the union of the groups' values. */
export type ParsedAnnotations = UnionToIntersection<ValueOf<Group>> & {
  /**
   * Set when an annotation is invalid in a way ingress-nginx answers with 503 for the
   * Ingress's locations (e.g. auth-secret missing); the reason names the annotation.
   */
  readonly denied: string | null;
};

/** The location-scoped fields of every group: what an Ingress's annotations say about each of its locations. */
export type LocationAnnotations = UnionToIntersection<FieldsIn<Group, 'location'>>;

export interface ParseResult {
  value: ParsedAnnotations;
  warnings: ModelWarning[];
}

/** Each location-scoped field, with its group's per-location adjustment if it has one. */
const LOCATION_FIELDS: readonly string[] = ANNOTATION_GROUPS.flatMap((g) => Object.keys(g.fields).filter((f) => g.fields[f as never] === 'location'));
const LOCATION_HOOKS: ReadonlyArray<{ field: string; atLocation: (value: unknown, site: LocationSite) => unknown }> = ANNOTATION_GROUPS.flatMap((g) =>
  Object.entries((g.atLocation ?? {}) as Record<string, (value: unknown, site: LocationSite) => unknown>).map(([field, atLocation]) => ({ field, atLocation })));

/** What every Location of an Ingress starts from: the shared settings and the annotations' denial. */
export interface LocationTemplate {
  readonly settings: LocationAnnotations;
  readonly denied: string | null;
}

// Ingresses with equal annotations share one parsed object (the builder's memo, and the defaults
// of every Ingress without annotations), so settings made once per parsed object are shared by
// all their locations; a parsed object whose location fields are all the defaults' (its
// annotations are backend-scoped only) shares the defaults' settings.
const templates = new WeakMap<ParsedAnnotations, LocationTemplate>();

/** The template of the Locations of an Ingress with `parsed` (made once per parsed object). */
export function locationTemplate(parsed: ParsedAnnotations, defaults?: ParsedAnnotations): LocationTemplate {
  let t = templates.get(parsed);
  if (t === undefined) {
    const base = defaults !== undefined && defaults !== parsed ? locationTemplate(defaults).settings : null;
    const settings = base !== null && sameLocationFields(parsed, base) ? base : locationSettingsOf(parsed);
    templates.set(parsed, (t = { settings, denied: parsed.denied }));
  }
  return t;
}

function sameLocationFields(parsed: ParsedAnnotations, settings: LocationAnnotations): boolean {
  const a = parsed as unknown as Record<string, unknown>;
  const b = settings as unknown as Record<string, unknown>;
  for (const field of LOCATION_FIELDS) if (a[field] !== b[field]) return false;
  return true;
}

function locationSettingsOf(values: Readonly<Record<string, unknown>> | ParsedAnnotations): LocationAnnotations {
  const made: Record<string, unknown> = {};
  const a = values as Record<string, unknown>;
  for (const field of LOCATION_FIELDS) made[field] = a[field];
  // A copy with the same keys in the same order gives every settings object one fast layout.
  return Object.freeze({ ...made }) as unknown as LocationAnnotations;
}

/** Settings adjusted for one path, per settings object and path: most paths get the settings themselves. */
const adjusted = new WeakMap<LocationAnnotations, Map<string, LocationAnnotations>>();

/**
 * The settings of a location at `site`: the groups' per-location adjustments applied
 * (no-tls-redirect-locations, no-auth-locations); `settings` itself when none changes a value.
 */
export function locationSettingsAt(settings: LocationAnnotations, site: LocationSite): LocationAnnotations {
  const s = settings as unknown as Record<string, unknown>;
  let changed: Record<string, unknown> | null = null;
  for (const { field, atLocation } of LOCATION_HOOKS) {
    const value = atLocation(s[field], site);
    if (value !== s[field]) (changed ??= {})[field] = value;
  }
  if (changed === null) return settings;
  let byPath = adjusted.get(settings);
  if (byPath === undefined) adjusted.set(settings, (byPath = new Map()));
  let made = byPath.get(site.path);
  if (made === undefined) byPath.set(site.path, (made = locationSettingsOf({ ...s, ...changed })));
  return made;
}

/** The annotations that name other objects, from every group's declaration: what the store indexes (see createStore). */
export const ANNOTATION_REFERENCES: AnnotationReferences = {
  secretAnnotations: ANNOTATION_GROUPS.flatMap((g) => g.secrets ?? []),
  configMapAnnotations: ANNOTATION_GROUPS.flatMap((g) => g.configMaps ?? []),
};

/** Every key's risk, by key without the prefix. */
const KEY_RISK: ReadonlyMap<string, RiskLevel> = new Map(ANNOTATION_GROUPS.flatMap((g) => Object.entries(g.keys)));

/** A StoreReader for defaults: an Ingress without annotations never looks anything up. */
const NO_STORE = new Proxy({}, {
  get: () => () => { throw new Error('annotation defaults must not read the store'); },
}) as StoreReader;

/**
 * What an Ingress without annotations gets: the groups run over an empty Ingress, so defaults
 * and parsing cannot disagree. One deep-frozen object per settings object.
 */
export function defaultAnnotations(settings: NginxSettings): ParsedAnnotations {
  return defaultsOf(settings).value;
}

interface Defaults {
  value: ParsedAnnotations;
  /** Each group's part of `value`, in ANNOTATION_GROUPS order. */
  parts: Record<string, unknown>[];
}

const defaultsBySettings = new WeakMap<NginxSettings, Defaults>();

function defaultsOf(settings: NginxSettings): Defaults {
  let d = defaultsBySettings.get(settings);
  if (d === undefined) {
    const ctx: AnnotationContext = { prefix: DEFAULT_ANNOTATIONS_PREFIX, settings, store: NO_STORE, prefixed: NONE };
    const parts = ANNOTATION_GROUPS.map((g) => deepFreeze(g.parse(EMPTY_INGRESS, ctx, mustNotWarn) as Record<string, unknown>));
    d = { value: deepFreeze(assemble(parts)), parts };
    defaultsBySettings.set(settings, d);
  }
  return d;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const NONE: Readonly<Record<string, string>> = Object.freeze({});
const EMPTY_INGRESS: Ingress = { metadata: { name: '', namespace: '' }, spec: {} };

function mustNotWarn(): never {
  throw new Error('annotation defaults must not warn');
}

/** Annotation key → the indexes of the groups that read it. */
const GROUPS_OF_KEY = new Map<string, number[]>();
ANNOTATION_GROUPS.forEach((g, i) => {
  for (const key of Object.keys(g.keys)) GROUPS_OF_KEY.set(key, [...(GROUPS_OF_KEY.get(key) ?? []), i]);
});

/** Which groups the Ingress sets a key of (by index); null when none: a few annotations are looked up, not a hundred keys. */
function groupsSet(prefixed: Readonly<Record<string, string>>): boolean[] | null {
  let set: boolean[] | null = null;
  for (const key in prefixed) {
    const groups = GROUPS_OF_KEY.get(key);
    if (groups === undefined) continue;
    set ??= new Array<boolean>(ANNOTATION_GROUPS.length).fill(false);
    for (const i of groups) set[i] = true;
  }
  return set;
}

function assemble(parts: Record<string, unknown>[]): ParsedAnnotations {
  const value: Record<string, unknown> = { denied: null };
  for (const part of parts) {
    for (const field in part) {
      if (field !== 'denied') value[field] = part[field];
      else if (value.denied === null) value.denied = part.denied ?? null;
    }
  }
  // A copy with the same keys in the same order: the keyed stores above leave `value` a slow
  // dictionary-mode object (~1.5 KB per Ingress); the spread copy has fast properties.
  return { ...value } as unknown as ParsedAnnotations;
}

/**
 * A group reads nothing but its own keys (the reader refuses others), so a group none of whose
 * keys the Ingress sets gives the default part: the shared, frozen object, which keeps the
 * model small and lets the hashing serialise it once. An Ingress without annotations gets the
 * defaults object itself.
 */
function runGroups(ing: Ingress, ctx: AnnotationContext & { prefixed: Readonly<Record<string, string>> }, warn: (key: string, message: string) => void): ParsedAnnotations {
  const defaults = defaultsOf(ctx.settings);
  const set = groupsSet(ctx.prefixed);
  if (set === null) return defaults.value;
  let value: Record<string, unknown> | null = null;
  let denied: string | null = null;
  for (let i = 0; i < ANNOTATION_GROUPS.length; i++) {
    const group = ANNOTATION_GROUPS[i]!;
    const part = set[i] ? group.parse(ing, ctx, warn) as Record<string, unknown> : null;
    denied ??= ((part ?? defaults.parts[i]!).denied as string | null | undefined) ?? null;
    if (part === null) continue;
    // A copy of the defaults keeps their fast-properties layout; these stores only replace values.
    value ??= { ...defaults.value };
    for (const field in part) if (field !== 'denied') value[field] = part[field];
  }
  if (value === null) return defaults.value;
  value.denied = denied;
  return value as unknown as ParsedAnnotations;
}

export function parseAnnotations(ing: Ingress, ctx: AnnotationContext): ParseResult {
  const warnings: ModelWarning[] = [];
  const warn = (key: string, message: string): void => {
    warnings.push({ object: `Ingress ${ing.metadata.namespace ?? 'default'}/${ing.metadata.name}`, field: `metadata.annotations["${ctx.prefix}/${key}"]`, message });
  };
  const prefixed = prefixedAnnotations(ing, ctx.prefix);
  const value = runGroups(ing, { prefix: ctx.prefix, settings: ctx.settings, store: ctx.store, prefixed, ...(ctx.addressPolicy ? { addressPolicy: ctx.addressPolicy } : {}) }, warn);
  // Here rather than in the groups: a group may decide it has nothing to read without reading
  // a key the risk limit hides, and such a key must still be named (the webhook refuses on it).
  const limit = ctx.settings.annotationsRiskLevel;
  for (const key in prefixed) {
    const risk = KEY_RISK.get(key);
    if (risk === undefined) warn(key, unsupportedAnnotationMessage(key));
    else if (!riskAllowed(risk, limit)) warn(key, `annotation has risk ${risk}, above annotations-risk-level ${limit}; ignored`);
  }
  return { value, warnings };
}
