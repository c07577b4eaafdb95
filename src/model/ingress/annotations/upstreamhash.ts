// upstream-hash-by group: consistent hashing of requests onto endpoints by an NGINX variable
// expression, optionally onto a subset of endpoints.
import { bool, int, InvalidValue, safeStringWithVariables, type Check } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const subsetSize = int(1, 1_000_000);

const keys = {
  'upstream-hash-by': 'High',
  'upstream-hash-by-subset': 'Low',
  'upstream-hash-by-subset-size': 'Low',
} as const;

/** An NGINX variable expression such as `$request_uri` or `$binary_remote_addr$http_x_user`. */
export const hashExpression: Check<string> = (raw) => {
  const v = safeStringWithVariables(raw.trim());
  if (!/^[A-Za-z0-9_$\-.:/]+$/.test(v.replace(/\$\{([A-Za-z0-9_]+)\}/g, '$$$1'))) throw new InvalidValue('upstream-hash-by must be NGINX variables ($name or ${name}) and plain text (letters, digits, _-.:/)');
  return v;
};

export interface UpstreamHashValue {
  readonly upstreamHashBy: { readonly hashBy: string; readonly subset: boolean; readonly subsetSize: number };
}

const fields = { upstreamHashBy: 'backend' } as const;

export const upstreamHashGroup: AnnotationGroup<UpstreamHashValue, typeof fields> = {
  name: 'upstreamhash',
  keys,
  fields,
  docs: {
    'upstream-hash-by': { values: 'NGINX variable expression, e.g. `$request_uri`', default: 'ConfigMap upstream-hash-by', description: 'Hash requests onto endpoints by this key (consistent hashing).' },
    'upstream-hash-by-subset': { values: '"true" or "false"', default: 'ConfigMap upstream-hash-by-subset', description: 'Hash onto a subset of endpoints, then round robin inside it.' },
    'upstream-hash-by-subset-size': { values: 'integer ≥ 1', default: 'ConfigMap upstream-hash-by-subset-size', description: 'Size of each subset.' },
  },
  // A backend policy: applied per request by the Lua balancer from the backends payload.
  perRequest: () => null,
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    return {
      upstreamHashBy: {
        hashBy: r.get('upstream-hash-by', hashExpression, ctx.settings.upstreamHashBy),
        subset: r.get('upstream-hash-by-subset', bool, ctx.settings.upstreamHashBySubset),
        subsetSize: r.get('upstream-hash-by-subset-size', subsetSize, ctx.settings.upstreamHashBySubsetSize),
      },
    };
  },
};
