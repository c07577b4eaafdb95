// custom-headers group: the ConfigMap's response headers as more_set_headers, after the snippets
// (as ingress-nginx orders them); values are literal (`$` printed as ${literal_dollar}).
import * as f from '../filters.js';
import { directives } from './layout.js';
import type { RenderBlock } from './types.js';

export const customHeadersBlock: RenderBlock = {
  group: 'customheaders',
  applied: 'directives',
  location: {
    snippet: ({ loc }) => (loc.settings.customHeaders === null ? ''
      : directives(Object.entries(loc.settings.customHeaders).map(([name, value]) => `more_set_headers ${f.moreHeader(name, value, 'custom-headers')}`))),
  },
};
