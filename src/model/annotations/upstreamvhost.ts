// upstream-vhost group: the Host header sent to the backend.
import { hostname, InvalidValue, type Check } from '../validate.js';
import { redirectParts } from '../redirect-url.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'upstream-vhost': 'Low' } as const;

/** A host name (with optional port) or a single NGINX variable such as `$host`. */
const hostWithPort = hostname({ port: true });

const vhost: Check<string> = (raw) => {
  const v = raw.trim();
  if (/^\$[A-Za-z_][A-Za-z0-9_]*$/.test(v)) return v;
  try {
    return hostWithPort(v);
  } catch {
    throw new InvalidValue('upstream-vhost must be a host name (optionally with :port) or one NGINX variable');
  }
};

export interface UpstreamVhostValue {
  readonly upstreamVhost: string;
}

const fields = { upstreamVhost: 'location' } as const;

export const upstreamVhostGroup: AnnotationGroup<UpstreamVhostValue, typeof fields> = {
  name: 'upstreamvhost',
  keys,
  fields,
  docs: {
    'upstream-vhost': { values: 'host[:port] or one NGINX variable', default: "''", description: 'Host header sent to the backend.' },
  },
  perRequest: ({ upstreamVhost }) => (redirectParts(upstreamVhost, '') === null ? `upstream-vhost ${upstreamVhost} has no value in the router's location` : null),
  parse(ing, ctx, warn) {
    return { upstreamVhost: annotationReader(ing, ctx, keys, warn).get('upstream-vhost', vhost, '') };
  },
};
