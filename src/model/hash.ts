// Model snapshots: hashes of each server and backend fragment, and checksums of the parts a
// decision compares. Fragments are hashed once per object (the builder hands back unchanged
// fragments, and unchanged lists, as the same objects); a list that differs from the previous
// one in a few places is derived from it (its map copied, the changed runs of lines rehashed),
// and the snapshot tells decide() which names may differ, so a small change costs little.
// Fragments are serialised by ./canonical.ts (sorted keys, with shared sub-objects digested).
import { createHash } from 'node:crypto';
import { canonicalDigest } from './canonical.js';
import type { NginxSettings } from './config/settings.js';
import type { Backend, Configuration, L4Service, Server } from './types.js';

export interface ServerHashes {
  /** Everything NGINX's configuration takes from the server (its certificate set aside). */
  structure: string;
  certificate: string | null;
}

export interface BackendHashes {
  /** Everything but the endpoints: balancer policies, affinity, canary shaping, alternatives. */
  policy: string;
  endpoints: string;
}

export interface ModelSnapshot {
  servers: ReadonlyMap<string, ServerHashes>;
  backends: ReadonlyMap<string, BackendHashes>;
  settings: string;
  defaultCertificate: string | null;
  /** TCP/UDP services without their endpoints. */
  l4Structure: string;
  /**
   * Endpoints of the ssl-passthrough backends ('' when none): with --enable-ssl-passthrough they
   * are static stream upstreams in nginx.conf, so a change of them needs a reload.
   */
  passthroughEndpoints: string;
  /** Changes here need a reload (TCP/UDP endpoints included: the stream upstreams are static in nginx.conf). */
  structureChecksum: string;
  /** Backends as POSTed to /configuration/backends. */
  backendsChecksum: string;
  /** The certificate uids (each a hash of its PEM). */
  certificatesChecksum: string;
  /** host → certificate uid. */
  serversChecksum: string;
  l4EndpointsChecksum: string;
  /** The whole configuration. */
  checksum: string;
  /** Set when `servers` was derived from an earlier snapshot's map: the only hosts whose hashes may differ from it. */
  serversDelta?: SnapshotDelta<ServerHashes>;
  /** Likewise for `backends`. */
  backendsDelta?: SnapshotDelta<BackendHashes>;
}

export interface SnapshotDelta<H> {
  from: ReadonlyMap<string, H>;
  /** In list order. */
  keys: string[];
}

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

// Memos of pure functions keyed by object identity; they hold nothing observable. The builder
// hands back unchanged servers, backends and lists as the same objects.
const serverMemos = new WeakMap<Server, ServerHashes>();
const backendMemos = new WeakMap<Backend, BackendHashes>();
const settingsHashes = new WeakMap<NginxSettings, string>();

const NO_CERTIFICATE = { certificate: null, tlsSecret: null };
const NO_ENDPOINTS = { endpoints: [] };

function serverHashes(s: Server): ServerHashes {
  let h = serverMemos.get(s);
  if (h === undefined) {
    h = { structure: canonicalDigest(s, NO_CERTIFICATE), certificate: s.certificate };
    serverMemos.set(s, h);
  }
  return h;
}

/** The hash of everything of a server but its certificate (memoised by identity, shared with the snapshot). */
export function serverStructureHash(s: Server): string {
  return serverHashes(s).structure;
}

function backendHashes(b: Backend): BackendHashes {
  let h = backendMemos.get(b);
  if (h === undefined) {
    h = { policy: canonicalDigest(b, NO_ENDPOINTS), endpoints: canonicalDigest(b.endpoints) };
    backendMemos.set(b, h);
  }
  return h;
}

/** Layers a derived map may stack before it is copied flat (each lookup walks the layers). */
const MAX_LAYERS = 8;

/**
 * A few changed entries over an earlier map with the same keys: copying a 10k-entry map on
 * every endpoint change costs milliseconds; after MAX_LAYERS layers the map is copied once.
 */
class LayeredMap<V> implements ReadonlyMap<string, V> {
  constructor(private readonly base: ReadonlyMap<string, V>, private readonly top: ReadonlyMap<string, V>, readonly layers: number) {}
  get size(): number { return this.base.size; }
  get(key: string): V | undefined {
    const v = this.top.get(key);
    return v !== undefined ? v : this.base.get(key);
  }
  has(key: string): boolean { return this.base.has(key); }
  keys(): MapIterator<string> { return this.base.keys(); }
  *values(): MapIterator<V> { for (const k of this.base.keys()) yield this.get(k)!; }
  *entries(): MapIterator<[string, V]> { for (const k of this.base.keys()) yield [k, this.get(k)!]; }
  [Symbol.iterator](): MapIterator<[string, V]> { return this.entries(); }
  forEach(fn: (value: V, key: string, map: ReadonlyMap<string, V>) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this);
  }
}

function layered<V>(base: ReadonlyMap<string, V>, top: Map<string, V>): ReadonlyMap<string, V> {
  const layers = base instanceof LayeredMap ? base.layers + 1 : 1;
  return layers > MAX_LAYERS ? new Map([...base, ...top]) : new LayeredMap(base, top, layers);
}

/** Lines per run: a list's checksum is the hash of the hashes of its runs, so a change rehashes one run. */
const RUN = 128;
/** Most changed items for which a list part is derived from the previous one. */
const DELTA_LIMIT = 256;

/** The hashes of one server or backend list: name → hashes, and checksums over its lines. */
interface ListPart<T, H> {
  list: readonly T[];
  names: string[];
  map: ReadonlyMap<string, H>;
  /** Per kind of line, the hashes of its runs. */
  runs: string[][];
  checksums: string[];
  delta: SnapshotDelta<H> | undefined;
}

interface ListKind<T, H> {
  name(item: T): string;
  hashes(item: T): H;
  /** The lines each item gives to the checksums, one per kind (`<name> <hash>...\n`). */
  line(item: T, hashes: H, kind: number): string;
  lineKinds: number;
  /**
   * Memo of parts by list; `recent` is the part made last, from which the next list's part is
   * derived. A cache only: a part is a pure function of its list's content either way.
   */
  parts: WeakMap<readonly T[], ListPart<T, H>>;
  recent: ListPart<T, H> | undefined;
}

function runHash<T, H>(kind: ListKind<T, H>, list: readonly T[], k: number, r: number): string {
  let text = '';
  const end = Math.min(list.length, (r + 1) * RUN);
  for (let i = r * RUN; i < end; i++) text += kind.line(list[i]!, kind.hashes(list[i]!), k);
  return sha1(text);
}

/** Which positions of `list` hold other objects than `prev` does, when few; null when the lists differ in shape. */
function changedPositions<T, H>(kind: ListKind<T, H>, prev: ListPart<T, H>, list: readonly T[]): number[] | null {
  if (prev.list.length !== list.length) return null;
  const changed: number[] = [];
  for (let i = 0; i < list.length; i++) {
    if (prev.list[i] === list[i]) continue;
    if (changed.length === DELTA_LIMIT || kind.name(list[i]!) !== prev.names[i]) return null;
    changed.push(i);
  }
  return changed;
}

function listPart<T, H>(kind: ListKind<T, H>, list: readonly T[]): ListPart<T, H> {
  const known = kind.parts.get(list);
  if (known) return known;
  const prev = kind.recent;
  const changed = prev ? changedPositions(kind, prev, list) : null;
  let part: ListPart<T, H>;
  if (prev && changed) {
    // Same names at the same places: the changed items' hashes over the previous map, and
    // their runs redone.
    const top = new Map<string, H>();
    const keys: string[] = [];
    const dirty = new Set<number>();
    for (const i of changed) {
      const name = prev.names[i]!;
      top.set(name, kind.hashes(list[i]!));
      keys.push(name);
      dirty.add(Math.floor(i / RUN));
    }
    const map = layered(prev.map, top);
    const runs = prev.runs.map((hashes, k) => hashes.map((h, r) => (dirty.has(r) ? runHash(kind, list, k, r) : h)));
    part = {
      list, names: prev.names, map, runs, checksums: runs.map((hashes) => sha1(hashes.join('\n'))),
      delta: { from: prev.map, keys },
    };
  } else {
    const names = new Array<string>(list.length);
    const map = new Map<string, H>();
    for (let i = 0; i < list.length; i++) {
      names[i] = kind.name(list[i]!);
      map.set(names[i]!, kind.hashes(list[i]!));
    }
    const runs: string[][] = [];
    for (let k = 0; k < kind.lineKinds; k++) {
      const hashes = new Array<string>(Math.ceil(list.length / RUN));
      for (let r = 0; r < hashes.length; r++) hashes[r] = runHash(kind, list, k, r);
      runs.push(hashes);
    }
    part = { list, names, map, runs, checksums: runs.map((hashes) => sha1(hashes.join('\n'))), delta: undefined };
  }
  kind.parts.set(list, part);
  // A list naming an item twice is never derived from (its map holds fewer entries than items).
  kind.recent = part.map.size === list.length ? part : undefined;
  return part;
}

const serverKind: ListKind<Server, ServerHashes> = {
  name: (s) => s.hostname,
  hashes: serverHashes,
  line: (s, h, k) => (k === 0 ? `${s.hostname} ${h.structure}\n` : `${s.hostname} ${h.certificate ?? '-'}\n`),
  lineKinds: 2, parts: new WeakMap(), recent: undefined,
};
const backendKind: ListKind<Backend, BackendHashes> = {
  name: (b) => b.name,
  hashes: backendHashes,
  line: (b, h) => `${b.name} ${h.policy} ${h.endpoints}\n`,
  lineKinds: 1, parts: new WeakMap(), recent: undefined,
};

function settingsHash(s: NginxSettings): string {
  let h = settingsHashes.get(s);
  if (h === undefined) {
    h = canonicalDigest(s);
    settingsHashes.set(s, h);
  }
  return h;
}

function l4Parts(tcp: L4Service[], udp: L4Service[]): { structure: string; endpoints: string } {
  const strip = (l: L4Service[]) => l.map((s) => ({ ...s, endpoints: [] }));
  return {
    structure: canonicalDigest({ tcp: strip(tcp), udp: strip(udp) }),
    endpoints: canonicalDigest({ tcp: tcp.map((s) => s.endpoints), udp: udp.map((s) => s.endpoints) }),
  };
}

export function snapshot(config: Configuration): ModelSnapshot {
  const settings = settingsHash(config.settings);
  const l4 = l4Parts(config.tcpEndpoints, config.udpEndpoints);
  const servers = listPart(serverKind, config.servers);
  const backends = listPart(backendKind, config.backends);
  let passthrough = '';
  for (const b of config.backends) if (b.sslPassthrough) passthrough += `${b.name} ${backends.map.get(b.name)?.endpoints ?? ''}\n`;
  const passthroughEndpoints = passthrough === '' ? '' : sha1(passthrough);
  const structureChecksum = sha1(
    `settings ${settings}\ndefault-certificate ${config.defaultCertificate ?? '-'}\nl4 ${l4.structure} ${l4.endpoints}\npassthrough ${passthroughEndpoints}\nservers ${servers.checksums[0]}\n`,
  );
  const backendsChecksum = backends.checksums[0]!;
  const certificatesChecksum = sha1(Object.keys(config.certificates).sort().join('\n'));
  const serversChecksum = servers.checksums[1]!;
  const checksum = createHash('sha256')
    .update([structureChecksum, backendsChecksum, certificatesChecksum, serversChecksum, l4.endpoints].join('\n'))
    .digest('hex');
  return {
    servers: servers.map, backends: backends.map, settings, defaultCertificate: config.defaultCertificate,
    l4Structure: l4.structure, passthroughEndpoints, structureChecksum, backendsChecksum, certificatesChecksum, serversChecksum,
    l4EndpointsChecksum: l4.endpoints, checksum,
    ...(servers.delta ? { serversDelta: servers.delta } : {}),
    ...(backends.delta ? { backendsDelta: backends.delta } : {}),
  };
}
