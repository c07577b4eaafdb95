// ipallowlist group: only these client networks may reach the location. An invalid list
// denies the location (as ingress-nginx does), so a typo never opens it to everyone.
import { cidrList, sortedUnique } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import { sourceRangesPerRequest } from './source-ranges.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'allowlist-source-range': 'Medium',
  'whitelist-source-range': 'Medium',
} as const;

export interface IpAllowlistValue {
  readonly allowlist: readonly string[];
}

const fields = { allowlist: 'location' } as const;

export const ipAllowlistGroup: AnnotationGroup<IpAllowlistValue, typeof fields> = {
  name: 'ipallowlist',
  keys,
  fields,
  docs: {
    'allowlist-source-range': { values: 'comma-separated IPs / CIDRs', default: 'ConfigMap whitelist-source-range', description: 'Client networks allowed to reach the location; others get 403.', onInvalid: 'warning; the location is denied (503)' },
    'whitelist-source-range': { values: 'comma-separated IPs / CIDRs', default: 'ConfigMap whitelist-source-range', description: 'Older name of allowlist-source-range (which wins when both are set).', onInvalid: 'warning; the location is denied (503)' },
  },
  perRequest: ({ allowlist }) => sourceRangesPerRequest('allowlist-source-range', allowlist),
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const key = r.has('allowlist-source-range') ? 'allowlist-source-range' : 'whitelist-source-range';
    const reading = r.read(key, cidrList);
    if (reading.state === 'invalid') return { allowlist: [], denied: `annotation ${key}: ${reading.message}` };
    return { allowlist: reading.state === 'ok' ? sortedUnique(reading.value) : [...ctx.settings.whitelistSourceRange], denied: null };
  },
};
