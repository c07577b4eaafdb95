// service-upstream group: proxy to the Service's cluster IP instead of its endpoints.
import { bool } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'service-upstream': 'Low' } as const;

export interface ServiceUpstreamValue {
  readonly serviceUpstream: boolean;
}

const fields = { serviceUpstream: 'backend' } as const;

export const serviceUpstreamGroup: AnnotationGroup<ServiceUpstreamValue, typeof fields> = {
  name: 'serviceupstream',
  keys,
  fields,
  docs: {
    'service-upstream': { values: '"true" or "false"', default: 'ConfigMap service-upstream', description: "Use the Service's cluster IP as the only endpoint." },
  },
  // A backend policy: applied per request by the Lua balancer from the backends payload.
  perRequest: () => null,
  parse(ing, ctx, warn) {
    return { serviceUpstream: annotationReader(ing, ctx, keys, warn).get('service-upstream', bool, ctx.settings.serviceUpstream) };
  },
};
