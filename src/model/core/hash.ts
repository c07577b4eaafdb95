// Model snapshots and the fragment hashes decide() compares. A snapshot keeps the parts of a
// configuration themselves, not their hashes: the builder hands back unchanged servers,
// backends and lists as the same objects, and model objects are immutable, so two fragments
// that are one object are equal without hashing. A fragment is hashed (the SHA-1 of its
// canonical text, ./canonical.ts) only when decide() meets two different objects of one name,
// and then once per object. A first sync, with nothing to compare with, hashes nothing; a sync
// after one change hashes the changed fragments and the ones they replace.
import { canonicalDigest, canonicalKey } from './canonical.js';
import type { NginxSettings } from './config/settings.js';
import type { Backend, Certificate, Configuration, L4Service, Server } from './types.js';

export interface ModelSnapshot {
  /** Sorted by hostname. */
  readonly servers: readonly Server[];
  /** Sorted by name. */
  readonly backends: readonly Backend[];
  readonly tcp: readonly L4Service[];
  readonly udp: readonly L4Service[];
  readonly certificates: Readonly<Record<string, Certificate>>;
  readonly defaultCertificate: string | null;
  readonly settings: NginxSettings;
  /** Configuration.listenerPorts as text ('' for none). */
  readonly listenerPorts: string;
  readonly frontends: Configuration['frontends'];
  /** The ids of Configuration.backendTLSLocations ('' for none): each id is a hash of what its location sets. */
  readonly backendTLS: string;
}

export function snapshot(config: Configuration): ModelSnapshot {
  return {
    servers: config.servers, backends: config.backends, tcp: config.tcpEndpoints, udp: config.udpEndpoints,
    certificates: config.certificates, defaultCertificate: config.defaultCertificate, settings: config.settings,
    listenerPorts: (config.listenerPorts ?? []).map((p) => `${p.port}=${p.local}${p.tls ? ' tls' : ''}`).join(','),
    frontends: config.frontends,
    backendTLS: (config.backendTLSLocations ?? []).map((l) => l.id).join(','),
  };
}

export interface L4Hashes {
  /** The services without their endpoints. */
  structure: string;
  endpoints: string;
}

// Memos of pure functions keyed by object identity; they hold nothing observable.
const serverMemos = new WeakMap<Server, string>();
const backendPolicyMemos = new WeakMap<Backend, string>();
const endpointsMemos = new WeakMap<Backend['endpoints'], string>();
const settingsMemos = new WeakMap<NginxSettings, string>();
const l4Memos = new WeakMap<readonly L4Service[], L4Hashes>();
const certificateListMemos = new WeakMap<object, string>();

function memoised<K extends object, V>(memo: WeakMap<K, V>, key: K, compute: (key: K) => V): V {
  let v = memo.get(key);
  if (v === undefined) {
    v = compute(key);
    memo.set(key, v);
  }
  return v;
}

const NO_CERTIFICATE = { certificate: null, tlsSecret: null };
const NO_ENDPOINTS = { endpoints: [] };

/** Everything NGINX's configuration takes from a server (its certificate set aside: Lua serves it). */
export const serverStructureHash = (s: Server): string => memoised(serverMemos, s, () => canonicalDigest(s, NO_CERTIFICATE));

/** Everything of a backend but its endpoints: balancer policies, affinity, canary shaping, alternatives. */
export const backendPolicyHash = (b: Backend): string => memoised(backendPolicyMemos, b, () => canonicalDigest(b, NO_ENDPOINTS));

/** Equal for equal endpoints, different for different ones (canonical.ts, canonicalKey). */
export const endpointsKey = (endpoints: Backend['endpoints']): string => memoised(endpointsMemos, endpoints, canonicalKey);

export const settingsHash = (s: NginxSettings): string => memoised(settingsMemos, s, canonicalDigest);

export const l4Hashes = (list: readonly L4Service[]): L4Hashes => memoised(l4Memos, list, () => ({
  structure: canonicalDigest(list.map((s) => ({ ...s, endpoints: [] }))),
  endpoints: canonicalDigest(list.map((s) => s.endpoints)),
}));

/** The certificate uids (each a hash of its PEM), sorted and joined. */
export const certificateUids = (certificates: Readonly<Record<string, Certificate>>): string =>
  memoised(certificateListMemos, certificates, (c) => Object.keys(c).sort().join('\n'));
