// mirror group: a copy of every request of the Ingress goes to mirror-target (its answer is
// ignored). The target is a URL whose host is a name, an IP address or `$host`, judged by the
// upstream address policy here and again for each address it leads to when a copy is sent
// (lua/external_peer.lua); its path may use NGINX variables. An invalid target turns mirroring
// off for the Ingress, never its routes.
import { judgeExternalName, parseAddress, STRICT_ADDRESS_POLICY } from '../../checks/address-policy.js';
import { hostname, InvalidValue, namesUnixSocket, oneOf, preview, safeStringWithVariables, type Check } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import { hostTemplate } from './upstreamvhost.js';
import type { AnnotationGroup } from './types.js';

const keys = {
  'mirror-target': 'High',
  'mirror-host': 'High',
  'mirror-request-body': 'Low',
} as const;

/** The host that stands for the request's own host, as in auth-url. */
export const MIRROR_HOST_VARIABLE = '$host';

export interface MirrorConfig {
  readonly scheme: 'http' | 'https';
  /** A DNS name (lower case), an IP address in its canonical spelling, or `$host`. */
  readonly host: string;
  readonly port: number;
  /** Path and query of the copy; NGINX variables allowed (`$request_uri` when the target has none). */
  readonly uri: string;
  /** The copy's Host header: mirror-host (a name, or host characters with NGINX variables, as ingress-nginx accepts), else the target's host; `$host` for the request's. */
  readonly hostHeader: string;
  /** mirror-request-body: the copy carries the request body. */
  readonly requestBody: boolean;
}

export interface MirrorValue {
  readonly mirror: MirrorConfig | null;
}

/** What a mirror-target says, before the address policy. */
interface Target {
  scheme: 'http' | 'https';
  host: string;
  port: number;
  uri: string;
}

// scheme :// host [:port] rest. The host ends where the path, query, port or a variable begins;
// `$host` (or `${host}`) is the one variable it may be.
const TARGET = /^(https?):\/\/(\[[^\]]*\]|\$\{host\}|\$host(?![A-Za-z0-9_])|[^/?#:$[\]]+)(?::(\d{1,5}))?([/?$].*)?$/i;

/** mirror-target: an http(s) URL (see TARGET); the path may use NGINX variables. */
export const mirrorTarget: Check<Target> = (raw) => {
  const v = raw.trim();
  if (namesUnixSocket(v)) throw new InvalidValue('the URL names a unix socket (NGINX reads http://unix:/path: as one); not allowed');
  const m = TARGET.exec(v);
  if (!m) throw new InvalidValue(`"${preview(v)}" is not an http(s) URL whose host is a name, an address or $host`);
  const scheme = m[1]!.toLowerCase() as 'http' | 'https';
  const rawHost = m[2]!;
  const port = m[3] === undefined ? (scheme === 'https' ? 443 : 80) : Number(m[3]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new InvalidValue(`port ${m[3]} is not a port number`);
  const uri = m[4] === undefined || m[4] === '' ? '$request_uri' : (m[4].startsWith('?') ? `/${m[4]}` : m[4]);
  if (/[\s"'<>\\^`{|}]/.test(uri.replace(/\$\{[A-Za-z0-9_]+\}/g, 'x'))) throw new InvalidValue('the path holds characters a URL may not hold unencoded');
  safeStringWithVariables(uri.replace(/\$\{([A-Za-z0-9_]+)\}/g, '$$$1'));
  let host: string;
  if (rawHost.startsWith('$')) host = MIRROR_HOST_VARIABLE;
  else {
    const address = parseAddress(rawHost);
    if (address) host = address.canonical;
    else if (rawHost.startsWith('[')) throw new InvalidValue(`"${preview(rawHost)}" is not an IPv6 address`);
    else host = hostname()(rawHost);
  }
  return { scheme, host, port, uri };
};

/** The Host header of a copy: what the target's host says, without the port, as ingress-nginx sends it. */
function defaultHostHeader(t: Target): string {
  if (t.host === MIRROR_HOST_VARIABLE) return MIRROR_HOST_VARIABLE;
  return parseAddress(t.host)?.family === 6 ? `[${t.host}]` : t.host;
}

const requestBody = oneOf(['on', 'off'] as const);

/** mirror-host: `$host` (or `${host}`) is the request's own host. */
const mirrorHost: Check<string> = (raw) => (/^\$(\{host\}|host)$/.test(raw.trim()) ? MIRROR_HOST_VARIABLE : hostTemplate(raw));

const fields = { mirror: 'location' } as const;

export const mirrorGroup: AnnotationGroup<MirrorValue, typeof fields> = {
  name: 'mirror',
  keys,
  fields,
  perRequest: ({ mirror }) => (mirror === null ? null : "mirror-target needs NGINX's mirror subrequest"),
  docs: {
    'mirror-target': {
      values: 'http(s) URL; the host a name, an IP address or `$host`, the path may use NGINX variables (`$request_uri`)',
      default: 'none',
      description: 'Send a copy of each request of the Ingress there; its answer is ignored and the client never waits for it. A target without a path gets the request URI. Addresses are judged by the upstream address policy (also every address a name resolves to).',
      onInvalid: 'warning; no mirroring',
    },
    'mirror-host': { values: 'host name[:port], or host characters with NGINX variables (`$host`, `$http_*`, …)', default: "the target's host", description: 'Host header of the copies (its variables are the request\'s).' },
    'mirror-request-body': { values: '"on" or "off"', default: 'on', description: 'Whether the copies carry the request body.' },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const target = r.read('mirror-target', mirrorTarget);
    if (target.state !== 'ok') {
      for (const key of ['mirror-host', 'mirror-request-body'] as const) {
        if (target.state === 'absent' && r.has(key)) warn(key, 'ignored without mirror-target');
      }
      return { mirror: null };
    }
    const t = target.value;
    if (t.host !== MIRROR_HOST_VARIABLE) {
      const verdict = judgeExternalName(ctx.addressPolicy ?? STRICT_ADDRESS_POLICY, t.host, String(t.port));
      if (!verdict.ok) {
        warn('mirror-target', `${t.host}:${t.port} refused: ${verdict.reason}; no mirroring`);
        return { mirror: null };
      }
    }
    return {
      mirror: {
        ...t,
        hostHeader: r.get('mirror-host', mirrorHost, defaultHostHeader(t)),
        requestBody: r.get('mirror-request-body', (raw) => requestBody(raw.trim()), 'on') === 'on',
      },
    };
  },
};
