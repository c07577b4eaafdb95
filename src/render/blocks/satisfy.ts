// satisfy group: NGINX's satisfy, which combines the location's access-phase checks (auth_basic,
// auth_request, allow/deny).
import { directives } from './layout.js';
import type { RenderBlock } from './types.js';

export const satisfyBlock: RenderBlock = {
  group: 'satisfy',
  applied: 'directives',
  location: {
    access: ({ loc }) => (loc.settings.satisfy === '' ? '' : directives([`satisfy ${loc.settings.satisfy === 'any' ? 'any' : 'all'}`])),
  },
};
