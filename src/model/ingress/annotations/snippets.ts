// snippets group: raw NGINX configuration from the Ingress (configuration-snippet for its
// locations, server-snippet for its server, stream-snippet for the stream block). Refused unless
// allow-snippet-annotations is true and annotations-risk-level is Critical; even then a snippet is
// read as NGINX reads it (../../checks/snippet-check.ts) and refused if it leaves its block or reaches
// outside the Ingress.
import { InvalidValue, type Check } from '../../checks/validate.js';
import { snippetProblem, type PeerCheck } from '../../checks/snippet-check.js';
import { isLocalhostName, isOwnAddress, judgeExternalName, parseAddress, STRICT_ADDRESS_POLICY, type AddressPolicy } from '../../checks/address-policy.js';
import { http2LuaProblem } from '../../checks/http2.js';
import { annotationReader, type AnnotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'configuration-snippet': 'Critical',
  'server-snippet': 'Critical',
  'stream-snippet': 'Critical',
} as const;

export const MAX_SNIPPET_LENGTH = 64 * 1024;

/** Raw NGINX directives: no NUL, bounded length, and a structure that stays in its block. */
export const snippet: Check<string> = (raw) => snippetIn(raw, {});

/** The blocks a stream-snippet may open: servers of its own and their upstreams. */
export const STREAM_BLOCKS = ['server', 'upstream'] as const;

const DEFAULT_DATA_PLANE_PORTS: ReadonlySet<number> = new Set([80, 443]);

/**
 * The upstream address policy on the peers a tenant's snippet names: no snippet reaches the node,
 * or the controller's own listeners, unless endpoints may; NGINX's own data-plane listeners, open
 * to anyone, excepted.
 */
function policyPeer(policy: AddressPolicy): PeerCheck {
  const open = policy.dataPlanePorts ?? DEFAULT_DATA_PLANE_PORTS;
  return (host, port) => {
    if (open.has(Number(port))) {
      const cls = isLocalhostName(host) ? 'loopback' : parseAddress(host)?.class;
      if (cls === 'loopback' || cls === 'unspecified' || isOwnAddress(policy, host)) return null;
    }
    const verdict = judgeExternalName(policy, host, port);
    return verdict.ok ? null : `refused by the upstream address policy: ${verdict.reason}`;
  };
}

const checksByPolicy = new WeakMap<AddressPolicy, { http: Check<string>; stream: Check<string> }>();
/** The checks of a tenant's snippets under `policy`, made once per policy. */
function checksFor(policy: AddressPolicy | undefined): { http: Check<string>; stream: Check<string> } {
  const p = policy ?? STRICT_ADDRESS_POLICY;
  let checks = checksByPolicy.get(p);
  if (!checks) {
    const peer = policyPeer(p);
    checks = { http: (raw) => snippetIn(raw, { peer }), stream: (raw) => snippetIn(raw, { blocks: STREAM_BLOCKS, peer }) };
    checksByPolicy.set(p, checks);
  }
  return checks;
}

/** A tenant's http snippet (configuration-, server-, auth-snippet): `snippet`, with the address policy on its peers. */
export function tenantSnippet(policy: AddressPolicy | undefined): Check<string> {
  return checksFor(policy).http;
}

function snippetIn(raw: string, opts: { blocks?: readonly string[]; peer?: PeerCheck }): string {
  if (raw.length > MAX_SNIPPET_LENGTH) throw new InvalidValue(`snippet is ${raw.length} characters long (at most ${MAX_SNIPPET_LENGTH})`);
  // Tabs and newlines are layout; any other control character is refused (the renderer would).
  const ctrl = /[\u0000-\u0008\u000b-\u001f\u007f]/.exec(raw);
  if (ctrl) throw new InvalidValue(`snippet contains the control character \\x${ctrl[0].charCodeAt(0).toString(16).padStart(2, '0')}`);
  const problem = snippetProblem(raw, opts);
  if (problem) throw new InvalidValue(`snippet ${problem}`);
  return raw;
}

function readSnippet(r: AnnotationReader, allowed: boolean, key: keyof typeof keys, check: Check<string>): string {
  if (!allowed && r.has(key)) {
    r.warn(key, 'snippet annotations are not allowed (ConfigMap allow-snippet-annotations is false); ignored');
    return '';
  }
  return r.get(key, check, '');
}

/** A snippet that works for HTTP/1.1 clients only is kept, with a warning while use-http2 is on. */
export function warnIfHttp1Only(r: AnnotationReader, key: string, text: string, useHttp2: boolean): string {
  const problem = useHttp2 && text !== '' ? http2LuaProblem(text) : null;
  if (problem) r.warn(key, problem);
  return text;
}

export interface SnippetsValue {
  /** Only set when snippets are allowed; otherwise ''. */
  readonly configurationSnippet: string;
  /** Only set when snippets are allowed; otherwise ''. */
  readonly serverSnippet: string;
  /**
   * Only set when snippets are allowed; otherwise ''. Carried by each location of the Ingress;
   * the stream block prints each Ingress's once.
   */
  readonly streamSnippet: string;
}

const fields = { configurationSnippet: 'location', serverSnippet: 'server', streamSnippet: 'location' } as const;

export const snippetsGroup: AnnotationGroup<SnippetsValue, typeof fields> = {
  name: 'snippets',
  keys,
  fields,
  docs: {
    'configuration-snippet': { values: 'NGINX directives', default: "''", description: 'Directives added to each location of the Ingress.', onInvalid: 'refused (warning, empty) unless allow-snippet-annotations is true and annotations-risk-level is Critical' },
    'server-snippet': { values: 'NGINX directives', default: "''", description: "Directives added to the host's server block.", onInvalid: 'refused (warning, empty) unless allow-snippet-annotations is true and annotations-risk-level is Critical' },
    'stream-snippet': { values: 'NGINX stream directives (server and upstream blocks)', default: "''", description: 'Directives added to the stream block (e.g. a TCP server of its own).', onInvalid: 'refused (warning, empty) unless allow-snippet-annotations is true and annotations-risk-level is Critical' },
  },
  perRequest: ({ configurationSnippet, serverSnippet }) => (configurationSnippet !== '' ? 'configuration-snippet is NGINX configuration'
    : serverSnippet !== '' ? 'server-snippet is NGINX configuration' : null),
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const checks = checksFor(ctx.addressPolicy);
    return {
      configurationSnippet: warnIfHttp1Only(r, 'configuration-snippet', readSnippet(r, ctx.settings.allowSnippetAnnotations, 'configuration-snippet', checks.http), ctx.settings.useHttp2),
      serverSnippet: warnIfHttp1Only(r, 'server-snippet', readSnippet(r, ctx.settings.allowSnippetAnnotations, 'server-snippet', checks.http), ctx.settings.useHttp2),
      streamSnippet: readSnippet(r, ctx.settings.allowSnippetAnnotations, 'stream-snippet', checks.stream),
    };
  },
};
