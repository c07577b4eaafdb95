// default-backend group: a Service in the Ingress's namespace that answers when the location's
// backend has no endpoints (and for custom-http-errors).
import { InvalidValue, type Check } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'default-backend': 'Low' } as const;

const NO_DEFAULT_BACKEND = { defaultBackendService: null, defaultBackend: null } as const;

/** A Service name (DNS-1035 label). */
export const serviceName: Check<string> = (raw) => {
  const v = raw.trim();
  if (!/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(v)) throw new InvalidValue('default-backend must be the name of a Service in the Ingress namespace');
  return v;
};

export interface DefaultBackendValue {
  /** `namespace/name` of the Service: the topology gives it a backend of its own. */
  readonly defaultBackendService: string | null;
  /** That backend's name: where the locations send requests while their backend has no endpoint, and error pages. */
  readonly defaultBackend: string | null;
}

/** ingress-nginx's name of a default-backend annotation's backend. */
export function customDefaultBackendName(serviceKey: string): string {
  return `custom-default-backend-${serviceKey.replace('/', '-')}`;
}

const fields = { defaultBackendService: 'backend', defaultBackend: 'location' } as const;

export const defaultBackendGroup: AnnotationGroup<DefaultBackendValue, typeof fields> = {
  name: 'defaultbackend',
  keys,
  fields,
  docs: {
    'default-backend': { values: 'Service name (same namespace)', default: 'none', description: 'Service that answers when the backend has no endpoints, and for custom-http-errors.', onInvalid: 'warning; ignored (also when the Service does not exist)' },
  },
  // The Lua balancer falls back to the default backend per request.
  perRequest: () => null,
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const name = r.get('default-backend', serviceName, '');
    if (name === '') return NO_DEFAULT_BACKEND;
    const key = `${ing.metadata.namespace ?? 'default'}/${name}`;
    if (ctx.store.getService(key) === undefined) {
      warn('default-backend', `Service ${key} not found; ignored`);
      return NO_DEFAULT_BACKEND;
    }
    return { defaultBackendService: key, defaultBackend: customDefaultBackendName(key) };
  },
};
