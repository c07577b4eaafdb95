// load-balance group: the balancing algorithm of the Ingress's backends.
import { oneOf } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

export const LOAD_BALANCE_ALGORITHMS = ['round_robin', 'ewma'] as const;

const algorithm = oneOf(LOAD_BALANCE_ALGORITHMS);

const keys = { 'load-balance': 'Low' } as const;

export interface LoadBalanceValue {
  readonly loadBalance: string;
}

const fields = { loadBalance: 'backend' } as const;

export const loadBalanceGroup: AnnotationGroup<LoadBalanceValue, typeof fields> = {
  name: 'loadbalance',
  keys,
  fields,
  docs: {
    'load-balance': { values: LOAD_BALANCE_ALGORITHMS.map((a) => `"${a}"`).join(' or '), default: 'ConfigMap load-balance', description: 'Load-balancing algorithm of the backend (consistent hashing: upstream-hash-by).' },
  },
  // A backend policy: applied per request by the Lua balancer from the backends payload.
  perRequest: () => null,
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    return { loadBalance: r.get('load-balance', algorithm, ctx.settings.loadBalance) };
  },
};
