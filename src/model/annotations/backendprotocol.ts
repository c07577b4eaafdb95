// backend-protocol group: the protocol NGINX speaks to the backend.
import { oneOf, type Check } from '../validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

export type BackendProtocol = 'HTTP' | 'HTTPS' | 'GRPC' | 'GRPCS' | 'AUTO_HTTP' | 'FCGI';

export const BACKEND_PROTOCOLS: readonly BackendProtocol[] = ['HTTP', 'HTTPS', 'GRPC', 'GRPCS', 'AUTO_HTTP', 'FCGI'];

const keys = { 'backend-protocol': 'Low' } as const;

const backendProtocol: Check<BackendProtocol> = oneOf(BACKEND_PROTOCOLS, { caseInsensitive: true });

export interface BackendProtocolValue {
  readonly backendProtocol: BackendProtocol;
}

const fields = { backendProtocol: 'location' } as const;

export const backendProtocolGroup: AnnotationGroup<BackendProtocolValue, typeof fields> = {
  name: 'backendprotocol',
  keys,
  fields,
  docs: {
    'backend-protocol': { values: BACKEND_PROTOCOLS.join(', ') + ' (any case)', default: 'HTTP', description: 'Protocol used to talk to the backend.' },
  },
  perRequest: ({ backendProtocol }) => (backendProtocol === 'HTTP' ? null : `backend-protocol ${backendProtocol} needs a location of its own`),
  parse(ing, ctx, warn) {
    return { backendProtocol: annotationReader(ing, ctx, keys, warn).get('backend-protocol', backendProtocol, 'HTTP') };
  },
};
