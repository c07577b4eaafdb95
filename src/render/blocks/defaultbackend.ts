// default-backend group: the Lua rewrite phase sends a request to the annotation's backend while
// the location's own backend has no endpoint (decided per request). Its error pages: see
// customhttperrors.ts.
import * as f from '../filters.js';
import type { RenderBlock } from './types.js';

export const defaultBackendBlock: RenderBlock = {
  group: 'defaultbackend',
  applied: 'directives',
  location: {
    lua: ({ loc }) => (loc.settings.defaultBackend ? { fallbackBackend: f.luaString(loc.settings.defaultBackend, 'default-backend') } : null),
  },
};
