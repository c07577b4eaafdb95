// Reviews a candidate Ingress against the current store: one model build over the candidate and
// the Ingresses sharing its server names, with the controller's own parsers and rules; the
// warnings about the candidate become findings that deny or warn (./verdict.ts). Nothing here
// runs NGINX or any other program.
import type { Ingress } from '../store/kube-types.js';
import { isCatchAll } from '../store/ingress-class.js';
import { normaliseIngress } from '../store/normalise.js';
import { createModelBuilder, createPerSettingsCaches, createSharedCaches, type BuildResult, type FragmentEntry, type FragmentMemo } from '../model/build.js';
import type { SourceEvent } from '../store/events.js';
import type { ServerEntry, ServerMemo } from '../model/ingress/topology.js';
import type { IngressFragment } from '../model/ingress/fragments.js';
import type { EndpointsEntry } from '../model/ingress/backend-assembly.js';
import type { ParsedAnnotations } from '../model/ingress/annotations/index.js';
import type { ApplyResult, StoreReader } from '../store/types.js';
import { createNeighbourIndex, keyOf, neighbourhood, serverNames, storeView, type NeighbourIndex } from './candidate.js';
import { warnRuleOf } from './verdict.js';
import { DEFAULT_BUDGETS, pathBudgetProblem } from '../model/core/budgets.js';
import { createGatewayReviewer } from './review-gateway.js';
import { NO_CONFIG_BYTES, type Finding, type ReviewResult, type Reviewer, type ReviewerOptions } from './review-types.js';
import type { Server } from '../model/core/types.js';

export type { Finding, ReviewResult, Reviewer, ReviewerOptions } from './review-types.js';

/** The reviewer over the controller's store. */
export interface StoreReviewer extends Reviewer {
  /**
   * Indexes the store's server names and reviews a few stored Ingresses (answers dropped), so
   * the first review a client waits for runs compiled code over a built index. The webhook's
   * thread calls it once its store holds the cluster.
   */
  warm(): void;
  /**
   * Applies a source event to the store and keeps the reviewer's index in step with it: an
   * Ingress event changes that Ingress's entries only. Once an event came this way, the reviews
   * no longer list the store (its list is sorted again after an Ingress is added or deleted), so
   * every later event must come this way too; the webhook's thread applies all of them here.
   */
  apply(event: SourceEvent): ApplyResult;
}

/** Stored Ingresses a warm-up reviews: enough for V8 to compile what a review runs. */
const WARM_UP_REVIEWS = 20;
/** Fragments of stored Ingresses kept between reviews (a few KB each). */
const KEPT_FRAGMENTS = 1000;
/** Hosts' servers kept between reviews: the default server `_`, which every review assembles, and the latest reviews' hosts. */
const KEPT_SERVERS = 64;

/** Services' endpoints kept between reviews (a few hundred bytes each). */
const KEPT_ENDPOINTS = 1000;
/** Parsed annotation sets kept between reviews (a few KB each; the controller's builder keeps up to 4,096). */
const KEPT_ANNOTATION_SETS = 512;

/** A map keeping the `limit` entries used last (read or written). */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }

  override get(k: K): V | undefined {
    const v = super.get(k);
    if (v !== undefined) {
      super.delete(k);
      super.set(k, v);
    }
    return v;
  }

  override set(k: K, v: V): this {
    super.delete(k);
    super.set(k, v);
    if (this.size > this.limit) super.delete(this.keys().next().value!);
    return this;
  }
}

/**
 * The fragments of the stored Ingresses the latest reviews built, the least recently used
 * dropped past `limit`; `reviewed()` is the candidate under review, whose fragment is not kept
 * (each review's candidate is a new object).
 */
export function createFragmentMemo(limit: number, reviewed: () => Ingress | null, onReviewed?: (entry: FragmentEntry) => void): FragmentMemo {
  const kept = new BoundedMap<Ingress, FragmentEntry>(limit);
  return {
    get: (ing) => kept.get(ing),
    set(ing, entry) {
      if (ing !== reviewed()) kept.set(ing, entry);
      else onReviewed?.(entry);
    },
  };
}

/**
 * Hosts' servers, the `limit` used last; a server assembled from the candidate's fragment is not
 * kept: no later review can use it (its candidate is another object), and keeping it would push
 * out a server that can be used (the default server's) and outlive the young generation only to
 * become garbage there.
 */
export function createServerMemo(limit: number, reviewedFragment: () => IngressFragment | null): ServerMemo {
  const kept = new BoundedMap<string, ServerEntry>(limit);
  return {
    get: (host) => kept.get(host),
    set(host, entry) {
      const fragment = reviewedFragment();
      if (fragment === null || !entry.inputs.includes(fragment)) kept.set(host, entry);
    },
    delete: (host) => kept.delete(host),
  };
}

export function createReviewer(opts: ReviewerOptions): StoreReviewer {
  const now = opts.now ?? (() => new Date());
  const index = createNeighbourIndex(opts.annotationsPrefix);
  /** Events come through apply(): the index changes with them. */
  let fed = false;
  /** The index must follow the store's whole list again (not built yet, or which Ingresses are served may have changed for many). */
  let stale = true;
  function currentIndex(): NeighbourIndex {
    if (!fed || stale) {
      index.follow(opts.store.listIngresses());
      stale = false;
    }
    return index;
  }
  // Parsed certificates, ConfigMap settings, the stored Ingresses' fragments, annotation sets, the
  // default root, hosts' servers and Services' endpoints outlive a review: each is memoised on the
  // store's objects (a fragment also on what it read, checked again), on the settings object, or
  // on the identity of everything it is made from.
  let reviewing: Ingress | null = null;
  /** The fragment built for the candidate in the review under way. */
  let reviewedFragment: IngressFragment | null = null;
  const shared = {
    ...createSharedCaches(),
    fragments: createFragmentMemo(KEPT_FRAGMENTS, () => reviewing, (entry) => { reviewedFragment = entry.fragment; }),
    perSettings: createPerSettingsCaches(() => new BoundedMap<string, ParsedAnnotations>(KEPT_ANNOTATION_SETS)),
    servers: createServerMemo(KEPT_SERVERS, () => reviewedFragment), endpoints: new BoundedMap<string, EndpointsEntry>(KEPT_ENDPOINTS),
  };

  /** The model of `view`, a neighbourhood of `candidate`. */
  function buildAround(candidate: Ingress, view: StoreReader): BuildResult {
    reviewing = candidate;
    try {
      // A builder of its own: the controller's keeps memos of the whole cluster, which a
      // neighbourhood of a few Ingresses would throw away; only the shared caches carry over.
      return createModelBuilder({
        annotationsPrefix: opts.annotationsPrefix, defaultServerPort: opts.defaultServerPort,
        reservedPorts: opts.reservedPorts, now, shared, addressPolicy: opts.addressPolicy, hostOwnership: opts.hostOwnership,
      }).build(view);
    } finally {
      reviewing = null;
      reviewedFragment = null;
    }
  }

  function notServed(reason: string): ReviewResult {
    return { served: false, reason, allowed: true, findings: [], tested: 0, viewMs: 0, buildMs: 0, configBytes: NO_CONFIG_BYTES };
  }
  const gateway = createGatewayReviewer(opts, { index: currentIndex, shared });

  const reviewer: StoreReviewer = {
    reviewGatewayAPI: (c) => (c.kind === 'HTTPRoute' ? gateway.reviewHTTPRoute(c.object) : gateway.reviewGateway(c.object)),
    apply(event) {
      const result = opts.store.apply(event);
      fed = true;
      // An IngressClass or a Namespace (its labels, with --watch-namespace-selector) decides
      // whether each of its Ingresses is served; nothing else but the Ingress itself does.
      if (event.kind === 'Ingress') {
        if (!stale) index.set(event.key, opts.store.getIngress(event.key));
      } else if (event.kind === 'IngressClass' || event.kind === 'Namespace') stale = true;
      return result;
    },
    warm() {
      currentIndex();
      const list = opts.store.listIngresses();
      for (let i = 0; i < Math.min(WARM_UP_REVIEWS, list.length); i++) reviewer.review(list[Math.floor((i * list.length) / WARM_UP_REVIEWS)]!);
    },
    review(raw) {
      const { store } = opts;
      const started = performance.now();
      const candidate = prepare(raw, now());
      const verdict = store.serves(candidate);
      if (!verdict.served) {
        // As ingress-nginx: an Ingress of ours that --disable-catch-all would drop is refused, not ignored.
        if (store.options.disableCatchAll && isCatchAll(candidate)
          && store.serves({ ...candidate, spec: { ...candidate.spec, defaultBackend: undefined } }).served) {
          const finding: Finding = {
            severity: 'deny', object: `Ingress ${keyOf(candidate)}`, field: 'spec.defaultBackend',
            message: 'this controller runs with --disable-catch-all: remove spec.defaultBackend',
          };
          return { ...notServed(verdict.reason), served: true, allowed: false, findings: [finding] };
        }
        return notServed(verdict.reason);
      }
      // The controller would set it aside; its size is known without building it, and the work of
      // a review stays bounded by the budget.
      const tooBig = pathBudgetProblem(candidate, opts.budgets ?? DEFAULT_BUDGETS);
      if (tooBig) {
        const finding: Finding = { severity: 'deny', object: `Ingress ${keyOf(candidate)}`, field: 'spec.rules', message: `${tooBig}; the controller would set it aside` };
        return { served: true, reason: verdict.reason, allowed: false, findings: [finding], tested: 0, viewMs: 0, buildMs: 0, configBytes: NO_CONFIG_BYTES };
      }
      const ingresses = neighbourhood(candidate, currentIndex(), opts.annotationsPrefix);
      const view = storeView(store, ingresses, candidate);
      const built = performance.now();
      const { config, warnings } = buildAround(candidate, view);
      const done = performance.now();

      const object = `Ingress ${keyOf(candidate)}`;
      const ctx = { annotations: candidate.metadata.annotations ?? {} };
      const denials: Finding[] = [];
      const notes: Finding[] = [];
      for (const w of warnings) {
        if (w.object !== object) continue;
        const rule = warnRuleOf(w, ctx);
        if (rule) notes.push({ ...w, severity: 'warn', rule: rule.name });
        else denials.push({ ...w, severity: 'deny' });
      }
      return {
        served: true, reason: verdict.reason, allowed: denials.length === 0, findings: [...dedupe(denials), ...dedupe(notes)],
        tested: ingresses.length, viewMs: built - started, buildMs: done - built,
        // Only the metrics of accepted reviews show it (as in ingress-nginx).
        configBytes: denials.length === 0 ? sizeOfOnce(config.servers, serverNames(candidate, opts.annotationsPrefix)) : NO_CONFIG_BYTES,
      };
    },
  };
  return reviewer;
}

/**
 * The JSON size of the servers named `names`, computed when first asked. A model's servers are
 * never changed once built (the builders' memos hand the same objects to later builds), so the
 * size asked later is the size at the review.
 */
function sizeOfOnce(servers: readonly Server[], names: readonly string[]): () => number {
  let bytes = -1;
  return () => {
    if (bytes < 0) {
      const named = new Set(names);
      bytes = 0;
      for (const s of servers) if (named.has(s.hostname)) bytes += JSON.stringify(s).length;
    }
    return bytes;
  };
}

/** The candidate as the store would hold it: paths defaulted, and a creation time (a new object is the newest). */
function prepare(ing: Ingress, now: Date): Ingress {
  const normal = normaliseIngress(ing);
  if (normal.metadata.creationTimestamp) return normal;
  return { ...normal, metadata: { ...normal.metadata, creationTimestamp: now.toISOString() } };
}

/** A warning can come out twice (e.g. a TLS Secret shared by two hosts); say it once. */
function dedupe(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const k = `${f.field}\0${f.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
