// A location's settings are shared and frozen (types.ts LocationSettings): a change to one
// location's settings makes a new settings object rather than editing the shared one.
import type { LocationSettings } from './types.js';

/** `settings` with some fields replaced: a new frozen settings object, its keys in the same order (one V8 layout). */
export function withLocationSettings(settings: LocationSettings, replaced: Partial<LocationSettings>): LocationSettings {
  return Object.freeze({ ...settings, ...replaced });
}
