// satisfy group: whether a location's access checks (basic auth, auth-url, the allowlist and
// denylist) must all pass (NGINX's `satisfy all`, the default) or any one of them (`satisfy any`).
import { oneOf } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = { satisfy: 'Low' } as const;

export interface SatisfyValue {
  /** '' when unset: NGINX's own default (all). */
  readonly satisfy: 'any' | 'all' | '';
}

const fields = { satisfy: 'location' } as const;

export const satisfyGroup: AnnotationGroup<SatisfyValue, typeof fields> = {
  name: 'satisfy',
  keys,
  fields,
  docs: {
    satisfy: { values: '"any" or "all"', default: "'' (all)", description: 'A request passes when it satisfies all of the location\'s access checks (basic auth, auth-url, allowlist, denylist), or any one of them.' },
  },
  // The Lua router checks the allowlist itself; NGINX's satisfy combines only its access-phase modules.
  perRequest: ({ satisfy }) => (satisfy === 'any' ? 'satisfy any needs NGINX\'s satisfy in a location' : null),
  parse(ing, ctx, warn) {
    return { satisfy: annotationReader(ing, ctx, keys, warn).get('satisfy', oneOf(['any', 'all'] as const), '') };
  },
};
