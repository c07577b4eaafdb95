// connection group: the Connection header sent upstream.
import * as f from '../filters.js';
import type { RenderBlock } from './types.js';

export const connectionBlock: RenderBlock = {
  group: 'connection',
  applied: 'directives',
  location: {
    headers: ({ loc }) => (loc.settings.connectionHeader === '' ? null : { connection: f.quote(loc.settings.connectionHeader, 'connection-proxy-header') }),
  },
};
