// What each server asks of the http and stream levels (ModSecurity's module and Core Rule Set,
// tracing, stream-snippets), memoised per Server object and settings. The model hands back the
// same Server object for an unchanged host, so a render after a change reads the locations of
// the changed servers only, not every location of the configuration again. (A server block's
// uses are kept with its rendered fragment instead; the memo holds the router's hosts.)
import type { NginxSettings } from '../model/core/config/settings.js';
import type { Server } from '../model/core/types.js';
import { modsecurityUseOf, type ModSecurityUse } from './blocks/modsecurity.js';
import { tracesSomeLocation } from './blocks/opentelemetry.js';
import { streamSnippetsOf, type IngressStreamSnippet } from './settings-directives.js';

export interface ServerHttpUses {
  readonly modsecurity: ModSecurityUse;
  readonly traced: boolean;
  readonly streamSnippets: readonly IngressStreamSnippet[];
}

/** What most servers ask: nothing (one shared object, so a fresh renderer allocates none for them). */
const NOTHING: ServerHttpUses = { modsecurity: { load: false, crs: false }, traced: false, streamSnippets: [] };

export function usesOf(server: Server, settings: NginxSettings): ServerHttpUses {
  const modsecurity = modsecurityUseOf(server, settings);
  const traced = tracesSomeLocation(server);
  const streamSnippets = streamSnippetsOf(server);
  return !modsecurity.load && !modsecurity.crs && !traced && streamSnippets.length === 0 ? NOTHING : { modsecurity, traced, streamSnippets };
}

/** A renderer's memo: `usesOf(server, settings)`; new settings start it afresh. */
export function createHttpUsesMemo(): (server: Server, s: NginxSettings) => ServerHttpUses {
  let memo = new WeakMap<Server, ServerHttpUses>();
  let memoSettings: NginxSettings | null = null;
  return (server, settings) => {
    if (settings !== memoSettings) {
      memo = new WeakMap();
      memoSettings = settings;
    }
    let uses = memo.get(server);
    if (!uses) memo.set(server, (uses = usesOf(server, settings)));
    return uses;
  };
}
