// Holds the budgets of src/model/core/budgets.ts in each sync: before the model build, the path
// budgets over the served Ingresses (read off the objects); after it, the byte budgets of the
// Lua payloads and what the configuration endpoint and its shared dicts can hold. Whoever is
// over is set aside in the quarantine (named in the log, Events, metrics and `dbg quarantine`
// like what NGINX refuses) and the model is built again without it, in the same sync.
import type { Logger } from '../log.js';
import type { BuildResult, ModelBuilder, StoreChanges } from '../model/build.js';
import {
  createPayloadMeter, overPathBudgets, overPayloadBudgets, type Budgets, type OverBudget, type PayloadCapacity, type PayloadTotals,
} from '../model/core/budgets.js';
import type { NginxSettings } from '../model/core/config/settings.js';
import type { Quarantine } from '../model/core/quarantine.js';
import { routesPayload } from '../model/core/routes-payload.js';
import type { DynamicPart } from '../model/core/payload.js';
import type { Ingress } from '../store/kube-types.js';
import type { StoreReader } from '../store/types.js';
import { CONFIGURATION_BODY_BYTES } from '../render/control.js';
import { LUA_SHARED_DICTS } from '../render/settings-directives.js';

/** Rebuilds per sync at most: each sets aside at least one Ingress. */
const MAX_ROUNDS = 8;
/** The share of a shared dict one value may be counted on to get (the slab allocator keeps some, and needs contiguous pages). */
const DICT_USABLE = 0.8;

export interface BudgetCheck {
  /** The model, built from the quarantine's view of the store with the budgets held. */
  build(changes: StoreChanges | undefined): BuildResult;
  /**
   * The configuration endpoint refused a POST of `part` as too large (413): the data plane holds
   * less than counted. `shortBytes`: how many bytes it lacked, when its answer said.
   */
  refused(part: DynamicPart, shortBytes?: number): void;
}

export interface BudgetCheckDeps {
  store: StoreReader;
  quarantine: Quarantine;
  builder: ModelBuilder;
  budgets: Budgets;
  logger: Logger;
}

/** What the Lua side can hold with these settings (lua-shared-dicts may resize the dicts). */
export function payloadCapacity(settings: NginxSettings): PayloadCapacity {
  const kb = (name: string) => settings.luaSharedDicts[name] ?? LUA_SHARED_DICTS[name] ?? 0;
  return {
    routesAndBackends: Math.floor(kb('configuration_data') * 1024 * DICT_USABLE),
    post: CONFIGURATION_BODY_BYTES,
    certificates: Math.floor(kb('certificate_data') * 1024 * DICT_USABLE),
  };
}

const keyOf = (ing: Ingress) => `${ing.metadata.namespace ?? 'default'}/${ing.metadata.name}`;

export function createBudgetCheck(deps: BudgetCheckDeps): BudgetCheck {
  const { store, quarantine, builder, budgets, logger } = deps;
  let paths: { list: readonly Ingress[]; over: OverBudget[] } | null = null;
  let order: { list: readonly Ingress[]; keys: string[] } | null = null;
  /** Lowered when the endpoint refused what was counted as fitting; never raised again. */
  const refusedAt: { routesAndBackends: number; certificates: number } = { routesAndBackends: Infinity, certificates: Infinity };
  let totals: PayloadTotals = { routesAndBackends: 0, certificates: 0 };
  const meter = createPayloadMeter();
  /** What the capacity could not be held against (said once while it lasts). */
  let lastNamed = '';

  function setAside(over: readonly OverBudget[]): void {
    for (const o of over) {
      quarantine.addIngress(store, o.key, o.reason, o.scope);
      logger.warn({ ingress: o.key, reason: o.reason, scope: o.scope }, `Ingress ${o.key} set aside: ${o.reason}`);
    }
  }

  function keysOf(list: readonly Ingress[]): string[] {
    if (order?.list !== list) order = { list, keys: list.map(keyOf) };
    return order.keys;
  }

  function capacity(settings: NginxSettings): PayloadCapacity {
    const c = payloadCapacity(settings);
    return { ...c, routesAndBackends: Math.min(c.routesAndBackends, refusedAt.routesAndBackends), certificates: Math.min(c.certificates, refusedAt.certificates) };
  }

  return {
    build(changes) {
      const list = quarantine.view(store).listIngresses();
      if (paths?.list !== list) paths = { list, over: overPathBudgets(list, budgets) };
      let hint = changes;
      if (paths.over.length > 0) {
        setAside(paths.over);
        hint = undefined;
      }
      let built = builder.build(quarantine.view(store), hint);
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const view = quarantine.view(store);
        const judged = overPayloadBudgets(built.config, routesPayload(built.config), () => keysOf(view.listIngresses()), budgets, capacity(built.config.settings), meter);
        totals = judged.totals;
        const note = judged.named?.join('; ') ?? '';
        if (note !== lastNamed && note !== '') logger.warn({ reason: note }, note);
        lastNamed = note;
        if (judged.over.length === 0) break;
        setAside(judged.over);
        built = builder.build(quarantine.view(store));
      }
      return built;
    },
    refused(part, shortBytes) {
      // What was counted as fitting did not: count on that much less from now on (a tenth less
      // when the answer did not say), so the next sync sets aside no more than makes it fit.
      const which = part === 'servers' ? 'certificates' : 'routesAndBackends';
      const short = shortBytes !== undefined && shortBytes > 0 ? shortBytes : Math.ceil(totals[which] * 0.1);
      refusedAt[which] = Math.min(refusedAt[which], Math.max(0, totals[which] - short));
      logger.warn({ part, shortBytes, capacity: refusedAt[which] }, `the configuration endpoint refused ${part} as too large${shortBytes ? ` (${shortBytes} bytes short)` : ''}; counting on ${refusedAt[which]} bytes for ${which === 'certificates' ? 'the certificates' : 'the route table and backends'} from now on`);
    },
  };
}
