// backend-protocol group: the protocol NGINX speaks to the backend.
import type { BackendProtocol } from '../types.js';
import { oneOf, type Check } from '../validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

export const BACKEND_PROTOCOLS: readonly BackendProtocol[] = ['HTTP', 'HTTPS', 'GRPC', 'GRPCS', 'AUTO_HTTP', 'FCGI'];

const keys = { 'backend-protocol': 'Low' } as const;

const backendProtocol: Check<BackendProtocol> = oneOf(BACKEND_PROTOCOLS, { caseInsensitive: true });

export const backendProtocolGroup: AnnotationGroup<'backendProtocol'> = {
  name: 'backendprotocol',
  keys,
  docs: {
    'backend-protocol': { values: BACKEND_PROTOCOLS.join(', ') + ' (any case)', default: 'HTTP', description: 'Protocol used to talk to the backend.' },
  },
  parse(ing, ctx, warn) {
    return { backendProtocol: annotationReader(ing, ctx, keys, warn).get('backend-protocol', backendProtocol, 'HTTP') };
  },
};
