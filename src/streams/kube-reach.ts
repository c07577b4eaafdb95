// Whether the Kubernetes API server answers, asked once before anything else starts, as
// ingress-nginx's createApiserverClient does: GET /version with its backoff (10 tries, from 1 s,
// factor 1.5, jitter 0.1), then the controller gives up and exits. A configuration that cannot
// work however long it is retried (no server URL, an invalid one, credentials refused) fails at once.
import { ApiException, CustomObjectsApi, NetworkingV1Api, VersionApi, type KubeConfig } from '@kubernetes/client-node';
import type { GatewayKind } from '../store/events.js';
import { KUBE_RESOURCES } from './kube-resources.js';
import { forbiddenMessage } from './kube-errors.js';

export interface ReachBackoff {
  steps: number;
  initialMs: number;
  factor: number;
  jitter: number;
}

/** ingress-nginx's wait.Backoff for the first request. */
export const REACH_BACKOFF: ReachBackoff = { steps: 10, initialMs: 1000, factor: 1.5, jitter: 0.1 };

export type Reach = { ok: true; version: string } | { ok: false; error: string };

export interface ReachOptions {
  backoff?: ReachBackoff;
  /** Waits between tries (injected: tests pass a virtual clock). */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Called after each failed try that will be retried. */
  onRetry?: (attempt: number, error: string, delayMs: number) => void;
}

/** The server of the current context, or why there is none to ask. */
export function serverProblem(kc: KubeConfig): string | null {
  const server = kc.getCurrentCluster()?.server;
  if (!server) return 'the Kubernetes configuration names no API server';
  try {
    const url = new URL(server);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return `the API server ${JSON.stringify(server)} is not an http(s) URL`;
  } catch {
    return `the API server ${JSON.stringify(server)} is not a URL`;
  }
  return null;
}

/**
 * Whether waiting may help: a connection that failed, a server error or an overloaded server may
 * answer later (ingress-nginx's reason for the backoff); credentials refused, or a configuration
 * the client refuses to use (http without insecure-skip-tls-verify), never will.
 */
function describe(err: unknown): { message: string; retry: boolean } {
  if (err instanceof ApiException) return { message: `HTTP ${err.code}`, retry: err.code >= 500 || err.code === 429 };
  const e = err as (Error & { code?: unknown; cause?: { code?: unknown } }) | undefined;
  const code = e?.code ?? e?.cause?.code;
  return { message: e?.message ?? String(err), retry: typeof code === 'string' && /^E[A-Z_]+$/.test(code) };
}

export async function reachApiServer(kc: KubeConfig, opts: ReachOptions = {}): Promise<Reach> {
  const problem = serverProblem(kc);
  if (problem) return { ok: false, error: problem };
  const b = opts.backoff ?? REACH_BACKOFF;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = opts.random ?? Math.random;
  const api = kc.makeApiClient(VersionApi);
  let delay = b.initialMs;
  let last = '';
  for (let attempt = 1; attempt <= b.steps; attempt++) {
    try {
      const v = await api.getCode();
      return { ok: true, version: v.gitVersion };
    } catch (err) {
      const d = describe(err);
      last = d.message;
      if (!d.retry) break;
      if (attempt === b.steps) break;
      const wait = Math.round(delay * (1 + b.jitter * random()));
      opts.onRetry?.(attempt, last, wait);
      await sleep(wait);
      delay *= b.factor;
    }
  }
  return { ok: false, error: `the API server ${kc.getCurrentCluster()!.server} does not answer: ${last}` };
}

/**
 * The API server's refusal when this controller may not list IngressClasses (a 403), asked once
 * at start as ingress-nginx does; undefined when it may (or the question failed otherwise: the
 * informer then reports and retries as for any kind).
 */
export async function ingressClassesForbidden(kc: KubeConfig): Promise<string | undefined> {
  try {
    await kc.makeApiClient(NetworkingV1Api).listIngressClass({ limit: 1 });
    return undefined;
  } catch (err) {
    return forbiddenMessage(err);
  }
}

/** The Gateway API kinds a cluster's CRD bundle may lack (newer than the core ones); the controller serves without them. */
export const OPTIONAL_GATEWAY_KINDS: readonly GatewayKind[] = ['ListenerSet', 'BackendTLSPolicy'];

/**
 * Of `kinds`, those the API server does not serve (a list answers 404: the CRD is not installed,
 * e.g. a cluster with only the standard channel's older bundle). Any other answer counts as
 * served: the informer reports its errors.
 */
export async function gatewayKindsNotServed(kc: KubeConfig, kinds: readonly GatewayKind[]): Promise<GatewayKind[]> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const missing = await Promise.all(kinds.map(async (kind) => {
    const [group, version] = KUBE_RESOURCES[kind].apiVersion.split('/') as [string, string];
    const plural = KUBE_RESOURCES[kind].plural;
    try {
      await (KUBE_RESOURCES[kind].namespaced
        ? api.listCustomObjectForAllNamespaces({ group, version, plural, limit: 1 })
        : api.listClusterCustomObject({ group, version, plural, limit: 1 }));
      return null;
    } catch (err) {
      return err instanceof ApiException && err.code === 404 ? kind : null;
    }
  }));
  return missing.filter((k): k is GatewayKind => k !== null);
}
