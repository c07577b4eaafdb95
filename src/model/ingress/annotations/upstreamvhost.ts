// upstream-vhost group: the Host header sent to the backend: a host name, or a template of host
// characters and NGINX variables as ingress-nginx accepts (Linkerd's documented
// `$service_name.$namespace.svc.cluster.local:8084`).
import { hostname, InvalidValue, preview, type Check } from '../../checks/validate.js';
import { LOCATION_VARIABLE, REDIRECT_VARIABLE, redirectParts, type LocationConstants } from '../../checks/redirect-url.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'upstream-vhost': 'Low' } as const;

const hostWithPort = hostname({ port: true });

/** `$name` or `${name}`. */
const VARIABLE = /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g;

/** A variable NGINX defines in every proxied location: the request's (`$host`, `$http_*`, …) or the location's (`$service_name`, …). */
export function upstreamVhostVariable(name: string): boolean {
  return (REDIRECT_VARIABLE.test(name) && name !== 'escaped_request_uri') || LOCATION_VARIABLE.test(name);
}

/** A host name (with optional port), or host characters and variables a location defines (also mirror-host's). */
export const hostTemplate: Check<string> = (raw) => {
  const v = raw.trim();
  if (!v.includes('$')) {
    try {
      return hostWithPort(v);
    } catch {
      throw new InvalidValue(`"${preview(v)}" is not a host name (optionally with :port)`);
    }
  }
  for (const m of v.matchAll(VARIABLE)) {
    const name = m[1] ?? m[2]!;
    if (!upstreamVhostVariable(name)) throw new InvalidValue(`$${name} is not a variable of the request or the location (e.g. $host, $service_name, $namespace)`);
  }
  if (!/^[A-Za-z0-9._:[\]-]*$/.test(v.replace(VARIABLE, 'x')) || v.length > 253) {
    throw new InvalidValue(`"${preview(v)}" holds characters a host name cannot (letters, digits, . - _ : [ ] and variables)`);
  }
  return v;
};

/** Any values of the location variables: whether the router can give the Host a value does not depend on them. */
const ANY_LOCATION: LocationConstants = { namespace: '', ingress_name: '', service_name: '', service_port: '' };

export interface UpstreamVhostValue {
  readonly upstreamVhost: string;
}

const fields = { upstreamVhost: 'location' } as const;

export const upstreamVhostGroup: AnnotationGroup<UpstreamVhostValue, typeof fields> = {
  name: 'upstreamvhost',
  keys,
  fields,
  docs: {
    'upstream-vhost': { values: 'host[:port], or host characters with NGINX variables of the request (`$host`, `$http_*`, …) or the location (`$service_name`, `$namespace`, `$ingress_name`, `$service_port`)', default: "''", description: 'Host header sent to the backend.' },
  },
  perRequest: ({ upstreamVhost }) => (redirectParts(upstreamVhost, '', {}, ANY_LOCATION) === null ? `upstream-vhost ${upstreamVhost} has no value in the router's location` : null),
  parse(ing, ctx, warn) {
    return { upstreamVhost: annotationReader(ing, ctx, keys, warn).get('upstream-vhost', hostTemplate, '') };
  },
};
