// Writes the Services generated for our Gateways (../model/gateway/infrastructure.ts): while this
// pod leads, after each applied sync, creates the missing ones, replaces those that differ and
// deletes those whose Gateway is gone. It only ever touches Services it made (our managed-by
// label and a Gateway of ours as controlling owner): a Service of the same name that a tenant made
// is left alone, named in a warning. Runs one at a time; a sync during a run queues one more.
import type { CoreV1Api, V1Service } from '@kubernetes/client-node';
import type { Observable, Subscription } from 'rxjs';
import type { Logger } from '../log.js';
import type { Gateway } from '../store/kube-types.js';
import { gatewayServices, MANAGED_BY, MANAGED_BY_LABEL, type GeneratedService } from '../model/gateway/infrastructure.js';
import { deepEqual } from '../store/normalise.js';

export interface GatewayInfrastructureWriter {
  sync(gateways: readonly Gateway[] | undefined): Promise<{ created: string[]; updated: string[]; deleted: string[]; refused: string[] }>;
  stop(): void;
}

const keyOf = (s: { metadata?: { namespace?: string; name?: string } }) => `${s.metadata?.namespace}/${s.metadata?.name}`;
/** Ours: our managed-by label and a Gateway as controlling owner. */
const isOurs = (s: V1Service) => s.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY
  && (s.metadata.ownerReferences ?? []).some((o) => o.kind === 'Gateway' && o.controller === true);

/** `namespace/name` of --publish-service → the name its Service answers in the cluster's DNS. */
export function serviceDNSName(publishService: string): string {
  const [namespace, name] = publishService.split('/');
  return `${name}.${namespace}.svc.cluster.local`;
}

export function createGatewayInfrastructureWriter(deps: { core: CoreV1Api; isLeader$: Observable<boolean>; target: string; logger: Logger }): GatewayInfrastructureWriter {
  const log = deps.logger.child({ actor: 'gateway-infrastructure' });
  let leader = false;
  const sub: Subscription = deps.isLeader$.subscribe((v) => { leader = v; });
  let running: Promise<unknown> | undefined;
  let next: readonly Gateway[] | undefined;
  const warned = new Set<string>();
  const warnOnce = (line: string) => { if (!warned.has(line)) { warned.add(line); log.warn(line); } };

  const differs = (want: GeneratedService, have: V1Service) => !deepEqual(
    { labels: want.metadata.labels, annotations: want.metadata.annotations, spec: want.spec },
    { labels: have.metadata?.labels ?? {}, annotations: have.metadata?.annotations ?? {}, spec: { type: have.spec?.type, externalName: have.spec?.externalName } },
  );

  async function run(gateways: readonly Gateway[]) {
    const out = { created: [] as string[], updated: [] as string[], deleted: [] as string[], refused: [] as string[] };
    const plan = gatewayServices(gateways, deps.target);
    for (const w of plan.warnings) warnOnce(w);
    const existing = (await deps.core.listServiceForAllNamespaces({ labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY}` })).items.filter(isOurs);
    const have = new Map(existing.map((s) => [keyOf(s), s]));
    const wanted = new Set(plan.services.map(keyOf));
    const jobs: Array<Promise<void>> = [];
    const attempt = (what: string, list: string[], f: () => Promise<unknown>) => jobs.push(f().then(() => { list.push(what); }, (err: unknown) => {
      const code = (err as { code?: number }).code;
      out.refused.push(what);
      // 409 on create: a Service of that name exists and is not ours; it is left alone. (On an
      // update, the Service changed since it was listed: the next sync tries again.)
      if (code === 409 && list === out.created) warnOnce(`Service ${what} exists and was not made by ingress-rx: the Gateway's Service is not generated`);
      else log.warn({ service: what, err: String(err) }, 'could not write the Gateway\'s Service');
    }));
    for (const want of plan.services) {
      const key = keyOf(want);
      const current = have.get(key);
      const { name, namespace } = want.metadata;
      if (!current) attempt(key, out.created, () => deps.core.createNamespacedService({ namespace, body: want as V1Service }));
      else if (differs(want, current)) {
        const body: V1Service = { ...current, metadata: { ...current.metadata, labels: want.metadata.labels, annotations: want.metadata.annotations }, spec: { ...current.spec, ...want.spec } };
        attempt(key, out.updated, () => deps.core.replaceNamespacedService({ name, namespace, body }));
      }
    }
    for (const s of existing) {
      const key = keyOf(s);
      if (!wanted.has(key)) attempt(key, out.deleted, () => deps.core.deleteNamespacedService({ name: s.metadata!.name!, namespace: s.metadata!.namespace! }));
    }
    await Promise.all(jobs);
    if (out.created.length + out.updated.length + out.deleted.length > 0) log.info(out, 'updated the Gateways\' Services');
    return out;
  }

  const writer: GatewayInfrastructureWriter = {
    async sync(gateways) {
      const none = { created: [], updated: [], deleted: [], refused: [] };
      if (!leader || !gateways) return none;
      if (running) { next = gateways; return none; }
      try {
        const p = run(gateways);
        running = p;
        return await p;
      } catch (err) {
        log.warn({ err: String(err) }, 'could not list the Gateways\' Services');
        return none;
      } finally {
        running = undefined;
        const queued = next;
        next = undefined;
        if (queued) void writer.sync(queued);
      }
    },
    stop() { sub.unsubscribe(); },
  };
  return writer;
}
