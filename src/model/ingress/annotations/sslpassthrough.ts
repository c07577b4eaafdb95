// ssl-passthrough group: hand the TLS connection to the backend untouched (server scope).
import { bool } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'ssl-passthrough': 'Low' } as const;

export interface SslPassthroughValue {
  readonly sslPassthrough: boolean;
}

const fields = { sslPassthrough: 'server' } as const;

export const sslPassthroughGroup: AnnotationGroup<SslPassthroughValue, typeof fields> = {
  name: 'sslpassthrough',
  keys,
  fields,
  docs: {
    'ssl-passthrough': { values: '"true" or "false"', default: 'false', description: 'Pass TLS connections for the host to the backend without terminating them.' },
  },
  perRequest: ({ sslPassthrough }) => (sslPassthrough ? 'ssl-passthrough needs the SNI stream server' : null),
  parse(ing, ctx, warn) {
    return { sslPassthrough: annotationReader(ing, ctx, keys, warn).get('ssl-passthrough', bool, false) };
  },
};
