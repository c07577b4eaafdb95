// The Service generated for each Gateway of ours (spec.infrastructure, GatewayInfrastructurePropagation):
// in the Gateway's namespace, named `<gateway>-ingress-rx`, of type ExternalName pointing at the controller's own
// Service (--publish-service): every Gateway is served by the same NGINX pods, which a Service in
// another namespace cannot select. It carries the Gateway's infrastructure labels and annotations,
// except keys under the domains Kubernetes and its controllers read (kubernetes.io, k8s.io and
// their subdomains: load-balancer, DNS and topology annotations) and ours (ingress-rx.io): a
// tenant's Gateway never steers a load balancer, a DNS record or the labels this controller
// selects its Services by. Pure: writing them is ../../actors/gateway-infrastructure.ts's part.
import type { Gateway } from '../../store/kube-types.js';

export const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'ingress-rx-gateway';
/** Key prefixes (domains) no tenant's infrastructure metadata may set. */
const RESERVED_DOMAINS = ['kubernetes.io', 'k8s.io', 'ingress-rx.io'];
const KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
/** The CRD's bounds: 8 labels, 16 annotations; an annotation value is bounded here (the API server's limit is 256 KiB for all). */
const MAX_LABELS = 8;
const MAX_ANNOTATIONS = 16;
const MAX_ANNOTATION_VALUE = 4096;

export interface GeneratedService {
  readonly apiVersion: 'v1';
  readonly kind: 'Service';
  readonly metadata: {
    readonly name: string; readonly namespace: string;
    readonly labels: Record<string, string>; readonly annotations: Record<string, string>;
    readonly ownerReferences: ReadonlyArray<{ apiVersion: string; kind: string; name: string; uid: string; controller: boolean }>;
  };
  readonly spec: { readonly type: 'ExternalName'; readonly externalName: string };
}

export interface InfrastructurePlan {
  readonly services: GeneratedService[];
  /** One line per key set aside: `Gateway ns/name spec.infrastructure.labels["k"]: reason`. */
  readonly warnings: string[];
}

function reservedDomain(key: string): string | undefined {
  const slash = key.indexOf('/');
  if (slash < 0) return undefined;
  const domain = key.slice(0, slash);
  return RESERVED_DOMAINS.find((d) => domain === d || domain.endsWith(`.${d}`));
}

/** The keys of one map that may be copied, and why the others may not. */
function copyable(entries: Record<string, unknown> | undefined, field: string, max: number, valueOk: (v: string) => boolean, out: string[]): Record<string, string> {
  const kept: Record<string, string> = {};
  const list = Object.entries(entries ?? {});
  for (const [i, [key, value]] of list.entries()) {
    const at = `${field}[${JSON.stringify(key.slice(0, 80))}]`;
    if (i >= max) { out.push(`${at}: more than ${max} keys; the rest are not copied`); break; }
    const domain = reservedDomain(key);
    const why = key.length > 316 || !KEY.test(key) || key.split('/')[0]!.length >= 253 ? 'not a valid key'
      : domain ? `keys under ${domain} are reserved (Kubernetes, its controllers and ingress-rx read them)`
        : typeof value !== 'string' || !valueOk(value) ? 'not a valid value'
          : null;
    if (why) out.push(`${at}: ${why}; not copied`);
    else kept[key] = value as string;
  }
  return kept;
}

/** The Service name: the Gateway's and `-ingress-rx` (so a tenant's own Services keep their names), or null when that is no DNS label. */
export function serviceNameFor(gw: Gateway): string | null {
  const name = `${gw.metadata.name}-ingress-rx`;
  return name.length <= 63 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(name) ? name : null;
}

/**
 * One Service per Gateway of ours, pointing at `target` (the controller's Service as a DNS name),
 * with the Gateway's infrastructure metadata that may be copied and, over them, our own labels.
 */
export function gatewayServices(gateways: readonly Gateway[], target: string): InfrastructurePlan {
  const services: GeneratedService[] = [];
  const warnings: string[] = [];
  for (const gw of gateways) {
    const key = `Gateway ${gw.metadata.namespace}/${gw.metadata.name}`;
    const name = serviceNameFor(gw);
    if (!name || !gw.metadata.uid) {
      warnings.push(`${key}: no Service is generated (${name ? 'the Gateway has no uid yet' : 'its name and -ingress-rx is not a Service name: a DNS label of at most 63 characters'})`);
      continue;
    }
    const notes: string[] = [];
    const infra = gw.spec.infrastructure;
    const labels = copyable(infra?.labels, 'spec.infrastructure.labels', MAX_LABELS, (v) => v.length <= 63 && LABEL_VALUE.test(v), notes);
    const annotations = copyable(infra?.annotations, 'spec.infrastructure.annotations', MAX_ANNOTATIONS, (v) => v.length <= MAX_ANNOTATION_VALUE, notes);
    for (const n of notes) warnings.push(`${key} ${n}`);
    services.push({
      apiVersion: 'v1', kind: 'Service',
      metadata: {
        name, namespace: gw.metadata.namespace!,
        labels: { ...labels, [GATEWAY_NAME_LABEL]: gw.metadata.name, [MANAGED_BY_LABEL]: MANAGED_BY },
        annotations,
        ownerReferences: [{ apiVersion: gw.apiVersion ?? 'gateway.networking.k8s.io/v1', kind: 'Gateway', name: gw.metadata.name, uid: gw.metadata.uid, controller: true }],
      },
      spec: { type: 'ExternalName', externalName: target },
    });
  }
  return { services, warnings };
}
