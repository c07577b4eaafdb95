// server-alias group: further host names for the Ingress's server (server scope).
import { commaList, hostname } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const aliasList = commaList(hostname({ wildcard: true }));

const keys = { 'server-alias': 'High' } as const;

export interface ServerAliasValue {
  readonly serverAliases: readonly string[];
}

const fields = { serverAliases: 'server' } as const;

export const serverAliasGroup: AnnotationGroup<ServerAliasValue, typeof fields> = {
  name: 'serveralias',
  keys,
  fields,
  docs: {
    'server-alias': { values: 'comma-separated host names (`*.` wildcard allowed)', default: "''", description: 'Extra server_name entries for the host.' },
  },
  perRequest: ({ serverAliases }) => (serverAliases.length === 0 ? null : 'server-alias needs server_name in a server block'),
  parse(ing, ctx, warn) {
    const aliases = annotationReader(ing, ctx, keys, warn).get('server-alias', aliasList, []);
    return { serverAliases: [...new Set(aliases)] };
  },
};
