// What each server asks of the http and stream levels (ModSecurity's module and Core Rule Set,
// tracing, stream-snippets), memoised per Server object and settings. The model hands back the
// same Server object for an unchanged host, so a render after a change reads the locations of
// the changed servers only, not every location of the configuration again.
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

/** A renderer's memo: `usesOf(server, settings)`. */
export function createHttpUsesMemo(): (server: Server, s: NginxSettings) => ServerHttpUses {
  const memo = new WeakMap<Server, { settings: NginxSettings; uses: ServerHttpUses }>();
  return (server, settings) => {
    let e = memo.get(server);
    if (e?.settings !== settings) {
      e = { settings, uses: { modsecurity: modsecurityUseOf(server, settings), traced: tracesSomeLocation(server), streamSnippets: streamSnippetsOf(server) } };
      memo.set(server, e);
    }
    return e.uses;
  };
}
