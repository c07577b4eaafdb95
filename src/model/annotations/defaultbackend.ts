// default-backend group: a Service in the Ingress's namespace that answers when the location's
// backend has no endpoints (and for custom-http-errors).
import { InvalidValue, type Check } from '../validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'default-backend': 'Low' } as const;

/** A Service name (DNS-1035 label). */
export const serviceName: Check<string> = (raw) => {
  const v = raw.trim();
  if (!/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(v)) throw new InvalidValue('default-backend must be the name of a Service in the Ingress namespace');
  return v;
};

export const defaultBackendGroup: AnnotationGroup<'defaultBackendService'> = {
  name: 'defaultbackend',
  keys,
  docs: {
    'default-backend': { values: 'Service name (same namespace)', default: 'none', description: 'Service that answers when the backend has no endpoints, and for custom-http-errors.', onInvalid: 'warning; ignored (also when the Service does not exist)' },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const name = r.get('default-backend', serviceName, '');
    if (name === '') return { defaultBackendService: null };
    const key = `${ing.metadata.namespace ?? 'default'}/${name}`;
    if (ctx.store.getService(key) === undefined) {
      warn('default-backend', `Service ${key} not found; ignored`);
      return { defaultBackendService: null };
    }
    return { defaultBackendService: key };
  },
};
