// What a review says (./review.ts for Ingresses, ./review-gateway.ts for HTTPRoutes and
// Gateways) and what a reviewer is made with.
import type { Gateway, HTTPRoute, Ingress } from '../store/kube-types.js';
import type { Store } from '../store/types.js';
import type { AddressPolicy } from '../model/checks/address-policy.js';
import type { ModelWarning } from '../model/core/types.js';
import type { Budgets } from '../model/core/budgets.js';
import type { Severity } from './verdict.js';

/** The Gateway API kinds the webhook reviews (gateway.networking.k8s.io/v1). */
export type GatewayAPIObject = { kind: 'HTTPRoute'; object: HTTPRoute } | { kind: 'Gateway'; object: Gateway };

export interface Finding extends ModelWarning {
  severity: Severity;
  /** The warn rule that made it a warning; absent when it denies. */
  rule?: string;
}

export interface ReviewResult {
  /** False: another controller's Ingress (or an unwatched namespace); allowed without a look. */
  served: boolean;
  /** Why it is or is not served. */
  reason: string;
  allowed: boolean;
  /** Denials first, then warnings, each in the model's order. */
  findings: Finding[];
  /** Ingresses in the one model build (the candidate and those sharing a server name with it). */
  tested: number;
  /** Time to pick those Ingresses and time of the model build, in ms. */
  viewMs: number;
  buildMs: number;
  /**
   * Bytes of the candidate's servers in the model (JSON), for an accepted review; 0 when denied.
   * Measured when first asked (the metrics ask at a scrape, of the last accepted review only),
   * not in every review: serialising the servers was a tenth of a review.
   */
  configBytes(): number;
}

export interface ReviewerOptions {
  store: Store;
  annotationsPrefix: string;
  defaultServerPort: number;
  reservedPorts?: number[];
  now?: () => Date;
  /** The controller's upstream address policy and --host-ownership, so a review sees what the controller will. */
  addressPolicy?: AddressPolicy;
  hostOwnership?: boolean;
  /** --enable-dynamic-routes (default true): HTTPRoute matches and filters are served only through the Lua router (./review-gateway.ts). */
  dynamicRoutes?: boolean;
  /** The controller's budgets: an Ingress over the per-Ingress path budget is denied before any model is built. */
  budgets?: Budgets;
}

/** `configBytes` of a review with no servers to measure (denied, not served, not an Ingress). */
export const NO_CONFIG_BYTES = (): number => 0;

export interface Reviewer {
  review(candidate: Ingress): ReviewResult;
  /** An HTTPRoute or Gateway (./review-gateway.ts); absent: the webhook reviews Ingresses only. */
  reviewGatewayAPI?(candidate: GatewayAPIObject): ReviewResult;
}
