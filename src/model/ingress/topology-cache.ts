// The topology cache: hands back the previous topology when neither the settings nor any Ingress
// fragment changed, patches it when a few plain Ingresses changed, else makes it anew.
import type { NginxSettings } from '../core/config/settings.js';
import type { IngressFragment } from './fragments.js';
import { computeTopology, type Topology, type TopologyOptions, type TopologyState } from './topology.js';
import { updateTopology } from './topology-update.js';
import { sameInputs } from '../core/tracking.js';

export interface TopologyCache {
  /** The topology for these fragments: the previous one when nothing changed, else updated or recomputed. */
  topologyFor(settings: NginxSettings, fragments: readonly IngressFragment[]): Topology;
}

export function createTopologyCache(opts: TopologyOptions): TopologyCache {
  const state: TopologyState = { topology: null, index: null, servers: opts.sharedServers ?? new Map() };
  return {
    topologyFor(settings, fragments) {
      const prev = state.topology;
      if (prev && prev.settings === settings && sameInputs(prev.fragments, fragments)) return prev;
      const next = (prev && state.index && updateTopology(state, state.index, prev, opts, settings, fragments))
        ?? computeTopology(state, opts, settings, fragments);
      state.topology = next.topology;
      state.index = next.index;
      return next.topology;
    },
  };
}
