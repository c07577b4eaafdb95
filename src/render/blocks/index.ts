// The registry of render blocks: one per annotation group (src/model/ingress/annotations/index.ts lists
// the groups; a test fails when a group has no block here), and the fixed order in which the
// location and server frames print the blocks' slots.
import { accessLogBlock } from './accesslog.js';
import { authBasicBlock } from './authbasic.js';
import { authExternalBlock } from './authexternal.js';
import { authTLSBlock } from './authtls.js';
import { backendProtocolBlock } from './backendprotocol.js';
import { connectionBlock } from './connection.js';
import { corsBlock } from './cors.js';
import { customHeadersBlock } from './customheaders.js';
import { customHttpErrorsBlock } from './customhttperrors.js';
import { defaultBackendBlock } from './defaultbackend.js';
import { fastcgiBlock } from './fastcgi.js';
import { http2PushPreloadBlock } from './http2pushpreload.js';
import { ipAllowlistBlock } from './ipallowlist.js';
import { ipDenylistBlock } from './ipdenylist.js';
import { mirrorBlock } from './mirror.js';
import { modsecurityBlock } from './modsecurity.js';
import { opentelemetryBlock } from './opentelemetry.js';
import { affinityBlock, canaryBlock, loadBalanceBlock, serviceUpstreamBlock, upstreamHashBlock } from './no-directives.js';
import { proxyBlock } from './proxy.js';
import { proxySSLBlock } from './proxyssl.js';
import { rateLimitBlock } from './ratelimit.js';
import { redirectBlock } from './redirect.js';
import { rewriteBlock } from './rewrite.js';
import { satisfyBlock } from './satisfy.js';
import { serverAliasBlock } from './serveralias.js';
import { snippetsBlock } from './snippets.js';
import { sslCipherBlock } from './sslcipher.js';
import { sslPassthroughBlock } from './sslpassthrough.js';
import type { LocationBlock, RenderBlock, ServerBlock } from './types.js';
import { upstreamVhostBlock } from './upstreamvhost.js';

export const RENDER_BLOCKS: readonly RenderBlock[] = [
  rewriteBlock, redirectBlock, serverAliasBlock, sslPassthroughBlock, sslCipherBlock, snippetsBlock,
  authBasicBlock, authExternalBlock, authTLSBlock, ipAllowlistBlock, ipDenylistBlock, satisfyBlock, rateLimitBlock,
  corsBlock, proxyBlock, proxySSLBlock, upstreamVhostBlock, backendProtocolBlock, fastcgiBlock, connectionBlock,
  customHttpErrorsBlock, defaultBackendBlock, accessLogBlock, mirrorBlock, customHeadersBlock, http2PushPreloadBlock, modsecurityBlock, opentelemetryBlock,
  canaryBlock, affinityBlock, loadBalanceBlock, upstreamHashBlock, serviceUpstreamBlock,
];

/**
 * Which blocks print in each slot of a location, in the order they print there (the slots
 * themselves are printed in the order of LocationBlock). A block that has a slot function must
 * be listed under that slot; a test checks it.
 */
export const LOCATION_LAYOUT: { readonly [S in keyof LocationBlock]-?: readonly RenderBlock[] } = {
  deny: [authBasicBlock],
  upstream: [backendProtocolBlock],
  redirect: [redirectBlock, rewriteBlock],
  lua: [opentelemetryBlock, rewriteBlock, authTLSBlock, defaultBackendBlock, snippetsBlock],
  // The denylist before the allowlist, as ingress-nginx: NGINX takes the first rule that matches.
  access: [accessLogBlock, ipDenylistBlock, ipAllowlistBlock, satisfyBlock, rateLimitBlock, authBasicBlock, authExternalBlock, modsecurityBlock],
  cors: [corsBlock],
  errors: [customHttpErrorsBlock, rewriteBlock],
  headers: [backendProtocolBlock, rewriteBlock, authBasicBlock, authExternalBlock, authTLSBlock, upstreamVhostBlock, connectionBlock, snippetsBlock],
  proxy: [proxyBlock, proxySSLBlock, fastcgiBlock, http2PushPreloadBlock, mirrorBlock],
  // Custom headers after the snippets, as ingress-nginx prints them (a later more_set_headers wins).
  snippet: [snippetsBlock, customHeadersBlock],
  internal: [authExternalBlock, customHttpErrorsBlock, mirrorBlock],
  http: [rateLimitBlock, authExternalBlock],
  uses: [authExternalBlock, proxySSLBlock],
};

/** Which blocks print in each part of a server, in order. */
export const SERVER_LAYOUT: { readonly [S in keyof ServerBlock]-?: readonly RenderBlock[] } = {
  names: [serverAliasBlock],
  // The TLS settings before the server-snippet, as ingress-nginx prints them.
  directives: [authTLSBlock, proxySSLBlock, sslCipherBlock, snippetsBlock],
  ownsHeaderFilter: [snippetsBlock],
  after: [redirectBlock],
};

/** The slot functions of a layout, in order: what the frames call. */
export function slotFunctions<B extends object, S extends keyof B>(layout: { readonly [K in S]: readonly RenderBlock[] }, part: 'location' | 'server', slot: S): Array<NonNullable<B[S]>> {
  return layout[slot].map((b) => {
    const fn = (b[part] as B | undefined)?.[slot];
    if (typeof fn !== 'function') throw new Error(`render block ${b.group} is listed under ${String(slot)} but has no ${part}.${String(slot)}`);
    return fn as NonNullable<B[S]>;
  });
}
