// upstream-vhost group: the Host header sent upstream (a variable such as `$host` or the location's
// `$service_name` is expanded, as ingress-nginx's quoted value is).
import { upstreamVhostVariable } from '../../model/ingress/annotations/upstreamvhost.js';
import * as f from '../filters.js';
import { escapedValue } from '../header-values.js';
import type { RenderBlock } from './types.js';

export const upstreamVhostBlock: RenderBlock = {
  group: 'upstreamvhost',
  applied: 'directives',
  location: {
    headers: ({ loc }) => {
      if (loc.settings.upstreamVhost === '') return null;
      // A variable a client fills ($uri, a header) could end the Host line: escaped first.
      const { setup, value } = escapedValue(f.quoteWithVariables(loc.settings.upstreamVhost, 'upstream-vhost', {}, upstreamVhostVariable), 'upstream_vhost', 'header');
      return { setup, host: value };
    },
  },
};
