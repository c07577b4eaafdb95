// What the pipeline's tests share: a TestScheduler that asserts with uvu, a store that keeps the
// last resourceVersion per key (everything relevant but `ignored/*`), and EndpointSlice events.
import * as assert from 'uvu/assert';
import { TestScheduler } from 'rxjs/testing';
import type { SourceEvent } from '../../src/store/events.js';
import type { Store, ApplyResult } from '../../src/store/types.js';

export function newScheduler(): TestScheduler {
  return new TestScheduler((a, b) => assert.equal(a, b));
}

/** A store that remembers the last value per key and calls everything relevant but `ignored/*`. */
export function memoryStore(): Store & { state: Map<string, string> } {
  const state = new Map<string, string>();
  return {
    state,
    options: {} as Store['options'],
    apply(ev: SourceEvent): ApplyResult {
      if (ev.key.startsWith('ignored/')) return { relevant: false, reason: 'not ours' };
      if (ev.type === 'delete') state.delete(ev.key);
      else state.set(ev.key, String(ev.object.metadata.resourceVersion));
      return { relevant: true, reason: 'changed', configmapChanged: ev.kind === 'ConfigMap' };
    },
    listIngresses: () => [], getIngress: () => undefined, getService: () => undefined,
    getEndpointSlices: () => [], getSecret: () => undefined, getConfigMap: () => undefined,
    getIngressClass: () => undefined, getNamespace: () => undefined, ingressesReferencingSecret: () => [], leftOutIngresses: () => [],
    serves: () => ({ served: true, reason: 'every Ingress' }),
  };
}

export const ev = (key: string, rv: number, type: SourceEvent['type'] = 'update'): SourceEvent =>
  ({ kind: 'EndpointSlice', type, key, object: { metadata: { name: key.split('/')[1], namespace: key.split('/')[0], resourceVersion: String(rv) } } });
