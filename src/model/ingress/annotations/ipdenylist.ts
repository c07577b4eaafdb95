// ipdenylist group: these client networks get 403 at the location. An invalid list denies the
// location (as ingress-nginx does).
import { cidrList, sortedUnique } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import { sourceRangesPerRequest } from './source-ranges.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'denylist-source-range': 'Medium' } as const;

export interface IpDenylistValue {
  readonly denylist: readonly string[];
}

const fields = { denylist: 'location' } as const;

export const ipDenylistGroup: AnnotationGroup<IpDenylistValue, typeof fields> = {
  name: 'ipdenylist',
  keys,
  fields,
  docs: {
    'denylist-source-range': { values: 'comma-separated IPs / CIDRs', default: 'ConfigMap denylist-source-range', description: 'Client networks refused (403) at the location.', onInvalid: 'warning; the location is denied (503)' },
  },
  perRequest: ({ denylist }) => sourceRangesPerRequest('denylist-source-range', denylist),
  parse(ing, ctx, warn) {
    const reading = annotationReader(ing, ctx, keys, warn).read('denylist-source-range', cidrList);
    if (reading.state === 'invalid') return { denylist: [], denied: `annotation denylist-source-range: ${reading.message}` };
    return { denylist: reading.state === 'ok' ? sortedUnique(reading.value) : [...ctx.settings.denylistSourceRange], denied: null };
  },
};
