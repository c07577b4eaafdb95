// Runs every annotation group over an Ingress and assembles ParsedAnnotations; the defaults
// (an Ingress without annotations) come from the ConfigMap settings.
import type { Ingress } from '../../store/kube-types.js';
import { DEFAULT_ANNOTATIONS_PREFIX } from '../../store/store.js';
import type { StoreReader } from '../../store/types.js';
import type { NginxSettings } from '../config/settings.js';
import type { ModelWarning } from '../types.js';
import { accessLogGroup } from './accesslog.js';
import { affinityGroup } from './affinity.js';
import { authBasicGroup } from './authbasic.js';
import { authExternalGroup } from './authexternal.js';
import { backendProtocolGroup } from './backendprotocol.js';
import { canaryGroup } from './canary.js';
import { connectionGroup } from './connection.js';
import { corsGroup } from './cors.js';
import { customHttpErrorsGroup } from './customhttperrors.js';
import { defaultBackendGroup } from './defaultbackend.js';
import { ipAllowlistGroup } from './ipallowlist.js';
import { ipDenylistGroup } from './ipdenylist.js';
import { loadBalanceGroup } from './loadbalance.js';
import { modsecurityGroup } from './modsecurity.js';
import { proxyGroup } from './proxy.js';
import { rateLimitGroup } from './ratelimit.js';
import { redirectGroup } from './redirect.js';
import { rewriteGroup } from './rewrite.js';
import { serverAliasGroup } from './serveralias.js';
import { serviceUpstreamGroup } from './serviceupstream.js';
import { snippetsGroup } from './snippets.js';
import { sslPassthroughGroup } from './sslpassthrough.js';
import { prefixedAnnotations } from './reader.js';
import type { AnnotationContext, AnnotationGroup, ParsedAnnotations, ParseResult } from './types.js';
import { upstreamHashGroup } from './upstreamhash.js';
import { upstreamVhostGroup } from './upstreamvhost.js';

export { DEFAULT_ANNOTATIONS_PREFIX };

/** Every group, in the order they run (the first group to deny names the reason). */
export const ANNOTATION_GROUPS: AnnotationGroup[] = [
  rewriteGroup, redirectGroup, serverAliasGroup, sslPassthroughGroup, snippetsGroup,
  authBasicGroup, authExternalGroup, ipAllowlistGroup, ipDenylistGroup, rateLimitGroup,
  corsGroup, proxyGroup, upstreamVhostGroup, backendProtocolGroup, connectionGroup,
  customHttpErrorsGroup, defaultBackendGroup, accessLogGroup, modsecurityGroup,
  canaryGroup, affinityGroup, loadBalanceGroup, upstreamHashGroup, serviceUpstreamGroup,
] as AnnotationGroup[];

const KNOWN_KEYS = new Set(ANNOTATION_GROUPS.flatMap((g) => Object.keys(g.keys)));

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
  const value = runGroups(ing, { prefix: ctx.prefix, settings: ctx.settings, store: ctx.store, prefixed }, warn);
  for (const key in prefixed) {
    if (!KNOWN_KEYS.has(key)) warn(key, 'annotation is not supported by ingress-rx; ignored');
  }
  return { value, warnings };
}
