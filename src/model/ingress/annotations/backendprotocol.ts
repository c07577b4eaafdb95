// backend-protocol group: the protocol NGINX speaks to the backend.
import { oneOf, type Check } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

export type BackendProtocol = 'HTTP' | 'HTTPS' | 'GRPC' | 'GRPCS' | 'AUTO_HTTP' | 'FCGI';

export const BACKEND_PROTOCOLS: readonly BackendProtocol[] = ['HTTP', 'HTTPS', 'GRPC', 'GRPCS', 'AUTO_HTTP', 'FCGI'];

const keys = { 'backend-protocol': 'Low' } as const;

/** How the warning on a gRPC backend begins (docs/differences.md, "gRPC over cleartext HTTP/2"). */
export const GRPC_CLEARTEXT = 'no cleartext HTTP/2 (h2c)';

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
    const r = annotationReader(ing, ctx, keys, warn);
    const protocol = r.get('backend-protocol', backendProtocol, 'HTTP');
    if (protocol === 'GRPC' || protocol === 'GRPCS') r.warn('backend-protocol', `${GRPC_CLEARTEXT}: gRPC clients are served over TLS (the HTTPS port); ingress-nginx also serves them in cleartext HTTP/2 on the HTTP port, which NGINX 1.22 cannot beside HTTP/1.1`);
    return { backendProtocol: protocol };
  },
};
