// Rendering one hand-built location or server through the server view, for the render blocks'
// tests: what a block prints, in which slot, and what it needs outside its location.
import * as assert from 'uvu/assert';
import { defaultSettings } from '../../src/model/core/config/defaults.js';
import type { NginxSettings } from '../../src/model/core/config/settings.js';
import type { Server } from '../../src/model/core/types.js';
import { defaultRuntime, type NginxRuntime } from '../../src/render/runtime.js';
import { serverView, type ServerView } from '../../src/render/view.js';
import { location, server, type LocationOverrides } from './config-builder.js';

/** A fixed runtime, as the golden files use. */
export const RUNTIME = defaultRuntime({ prefix: '/var/lib/ingress-rx', listenAddresses: ['*'], luaDir: '/opt/ingress-rx/lua', resolvers: ['10.96.0.10'] });

export interface RenderOptions {
  server?: Partial<Server>;
  settings?: Partial<NginxSettings>;
  runtime?: Partial<NginxRuntime>;
  wwwRedirectFrom?: string;
}

/** The view of server app.example.com with these locations (each a default location with overrides). */
export function renderServer(locations: Array<LocationOverrides>, opts: RenderOptions = {}): ServerView {
  const srv = server('app.example.com', { locations: locations.map((l) => location(l)), ...opts.server });
  return serverView(srv, {
    settings: { ...defaultSettings(), ...opts.settings },
    runtime: { ...RUNTIME, ...opts.runtime },
    wwwRedirectFrom: opts.wwwRedirectFrom ?? null,
  });
}

/** The view of one location with these fields. */
export function renderLocation(over: LocationOverrides, opts: RenderOptions = {}): ServerView {
  return renderServer([over], opts);
}

/** Asserts that each text occurs in `text`, in this order. */
export function inOrder(text: string, ...parts: string[]): void {
  let at = -1;
  for (const p of parts) {
    const i = text.indexOf(p, at + 1);
    assert.ok(i > at, `${JSON.stringify(p)} after position ${at} in:\n${text}`);
    at = i;
  }
}

/** The lines of a location block between `location … {` and its `}`, trimmed. */
export function bodyLines(view: ServerView): string[] {
  return view.locationsText.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('location ') && l !== '}');
}
