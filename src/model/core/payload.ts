// The Lua wire payloads, as ingress-nginx posts them: /configuration/backends (the backends)
// and /configuration/servers ({ certificates: uid → PEM, servers: hostname → uid }). Hosts
// without a certificate map to EMPTY_UID so Lua forgets any certificate it had for them.
import { wwwRedirectNames } from './www-names.js';
import type { Backend, Configuration } from './types.js';
import { routeTableIds, type RoutesPayload } from './routes-payload.js';
import { listChanges } from './list-changes.js';

export const EMPTY_UID = '-1';
/** The servers payload's key of the certificate of a Gateway HTTPS listener without hostname. */
export const GATEWAY_CATCH_ALL = '_gateway';
/**
 * The certificate of a host whose TLS Secret is missing or unusable without
 * --default-ssl-certificate: NGINX's own fallback certificate (no PEM is posted; Lua keeps the
 * fallback), and the host is still redirected to HTTPS, as in ingress-nginx.
 */
export const FALLBACK_UID = 'fallback';

export interface ServersPayload {
  certificates: Record<string, string>;
  servers: Record<string, string>;
  /** The whole map: Lua forgets the hosts it does not name (and certificates no host names); without it, a POST only adds and changes. */
  complete?: true;
  /** The Gateway API's HTTPS listeners (lua/gateway_frontend.lua); posted with every complete map, absent without any. */
  frontends?: NonNullable<Configuration['frontends']>;
}

/** What one dynamic update posts: each part present is POSTed to /configuration/<part>. */
export interface DynamicUpdate {
  backends?: readonly Backend[];
  servers?: ServersPayload;
  /** The dynamic hosts' route table (./routes-payload.ts), posted after the backends and certificates it names. */
  routes?: RoutesPayload;
}

export type DynamicPart = keyof DynamicUpdate;

/** The backends in the model's order, which is by name. */
export function backendsPayload(config: Configuration): Backend[] {
  return [...config.backends];
}

/** Backends per JSON.stringify call of a whole list: one call per run is cheaper than one per backend. */
const RUN = 128;

/** The whole list's JSON elements (without the brackets) as chunks, a run of backends each. */
function wholeListChunks(list: readonly Backend[]): string[] {
  const chunks: string[] = [];
  for (let from = 0; from < list.length; from += RUN) {
    if (from > 0) chunks.push(',');
    chunks.push(JSON.stringify(list.slice(from, from + RUN)).slice(1, -1));
  }
  return chunks;
}

/** One POST of the backends: its body as chunks, and what its answer means for the next. */
export interface BackendListPost {
  readonly body: readonly string[];
  /** Only the backends that changed since the list NGINX accepted last (`base`), and those gone. */
  readonly delta: boolean;
  /** Backends sent plus names deleted (0: a change that changes nothing). */
  readonly changes: number;
  /** NGINX answered 201: the next POST may be a change to this list. */
  accepted(): void;
}

export interface BackendListSerialiser {
  post(list: readonly Backend[]): BackendListPost;
  /** What NGINX holds is unknown (a POST failed or was refused): the next POST is the whole list. */
  forget(): void;
  /** The list NGINX accepted last as a JSON array (GET /configuration/backends's answer, names in order), or null. */
  held(): string | null;
}

/**
 * The dynamic-config actor's serialiser of the backends (docs/dynamic-routes.md, "The
 * backends"): the whole list while it cannot be sure what NGINX holds (its first POST, after a
 * failed or refused one) as `{"id","backends"}`; after that, a change to the list NGINX
 * accepted last (named by `base`): the backends whose text changed and the names of those gone,
 * so a new Service or an endpoint change sends, and NGINX stores and each worker decodes, one
 * backend of thousands. The body's chunks are written one after another (never joined).
 */
export function createBackendsSerialiser(nextId: () => string = routeTableIds()): BackendListSerialiser {
  // What NGINX holds, as the backend objects it was sent, not their JSON (~0.75 KB a backend,
  // 7.5 MB at 10k): the model hands back an unchanged backend as the same immutable object, so
  // most compare by identity, and only a new object of a held name is serialised to compare.
  let held: { id: string; backends: Map<string, Backend> } | null = null;
  const byName = (list: readonly Backend[]) => new Map(list.map((backend) => [backend.name, backend]));
  return {
    post(list) {
      const id = nextId();
      const base = held;
      if (!base) {
        const backends = byName(list);
        // The model's list names each backend once; any other list is serialised name by name, the last of a name in the first one's place.
        const elements = backends.size === list.length ? wholeListChunks(list) : [...backends.values()].map((backend, i) => (i === 0 ? JSON.stringify(backend) : `,${JSON.stringify(backend)}`));
        return { body: [`{"id":${JSON.stringify(id)},"backends":[`, ...elements, ']}'], delta: false, changes: backends.size, accepted: () => { held = { id, backends }; } };
      }
      const changed: string[] = [];
      // New objects of held names, sent or not (equal text): held from then on, so the next post compares them by identity.
      const replaced: Backend[] = [];
      let kept = 0;
      for (const backend of list) {
        const before = base.backends.get(backend.name);
        if (before === backend) {
          kept++;
          continue;
        }
        const text = JSON.stringify(backend);
        if (before !== undefined) kept++;
        if (before === undefined || JSON.stringify(before) !== text) changed.push(changed.length === 0 ? text : `,${text}`);
        replaced.push(backend);
      }
      const deleted: string[] = [];
      if (kept < base.backends.size) {
        const names = new Set(list.map((backend) => backend.name));
        for (const name of base.backends.keys()) if (!names.has(name)) deleted.push(name);
        deleted.sort();
      }
      const head = `{"base":${JSON.stringify(base.id)},"id":${JSON.stringify(id)},"deleted":${JSON.stringify(deleted)},`;
      return {
        body: [`${head}"backends":[`, ...changed, ']}'], delta: true, changes: changed.length + deleted.length,
        accepted: () => {
          if (held !== base) { held = { id, backends: byName(list) }; return; }
          for (const backend of replaced) base.backends.set(backend.name, backend);
          for (const name of deleted) base.backends.delete(name);
          held = { id, backends: base.backends };
        },
      };
    },
    forget() { held = null; },
    held() {
      if (!held) return null;
      return `[${[...held.backends.keys()].sort().map((name) => JSON.stringify(held!.backends.get(name))).join(',')}]`;
    },
  };
}

/** Whether a certificate host name (possibly `*.example.com`) matches `host`. */
export function hostMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase();
  const h = host.toLowerCase();
  if (!p.startsWith('*.')) return p === h;
  const dot = h.indexOf('.');
  return dot > 0 && h.slice(dot) === p.slice(1);
}

function sortedRecord(r: Map<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...r.keys()].sort()) out[k] = r.get(k)!;
  return out;
}

/**
 * What changed from the map NGINX accepted last (`held`) to `next`: the hosts whose certificate
 * changed (those gone as EMPTY_UID, which Lua forgets), the PEMs they name, and the Gateway
 * listeners when they changed; null when nothing did. A sync that adds one plain host out of
 * thousands then posts nothing here. The whole map goes when the listeners went away (only a
 * complete map forgets them).
 */
export function serversDelta(held: ServersPayload, next: ServersPayload): ServersPayload | null {
  const servers: Record<string, string> = {};
  const certificates: Record<string, string> = {};
  let changed = false;
  const name = (uid: string) => {
    const pem = next.certificates[uid];
    if (pem !== undefined) certificates[uid] = pem;
  };
  for (const [host, uid] of Object.entries(next.servers)) {
    // Lua holds nothing for EMPTY_UID: a host without a certificate is the same as no host.
    if ((held.servers[host] ?? EMPTY_UID) === uid && (held.certificates[uid] ?? '') === (next.certificates[uid] ?? '')) continue;
    servers[host] = uid;
    name(uid);
    changed = true;
  }
  // In name order: a held map brought up to date by serversChange is not sorted.
  const gone: string[] = [];
  for (const host of Object.keys(held.servers)) {
    if (next.servers[host] !== undefined || held.servers[host] === EMPTY_UID) continue;
    gone.push(host);
  }
  for (const host of gone.sort()) servers[host] = EMPTY_UID;
  if (gone.length > 0) changed = true;
  const frontendsChanged = JSON.stringify(held.frontends) !== JSON.stringify(next.frontends);
  if (frontendsChanged && next.frontends === undefined) return next;
  if (!changed && !frontendsChanged) return null;
  return { certificates, servers, ...(frontendsChanged ? { frontends: next.frontends } : {}) };
}

export function serversPayload(config: Configuration): ServersPayload {
  const { servers, certificates } = hostCertificates(config);
  const payload: ServersPayload = { certificates: sortedRecord(certificates), servers: sortedRecord(servers), complete: true };
  if (config.frontends) payload.frontends = config.frontends;
  return payload;
}

/** The servers map's entries (host → certificate uid, uid → PEM); with `only`, just those names'. */
function hostCertificates(config: Configuration, only?: ReadonlySet<string>): { servers: Map<string, string>; certificates: Map<string, string> } {
  const servers = new Map<string, string>();
  const certificates = new Map<string, string>();
  const uidFor = (uid: string | null): string => {
    if (uid === null) return EMPTY_UID;
    if (uid === FALLBACK_UID) return uid;
    const cert = config.certificates[uid];
    if (!cert) return EMPTY_UID;
    certificates.set(uid, cert.pem);
    return uid;
  };
  for (const s of config.servers) {
    // A Gateway listener port's host (`host:port`): the certificate of its HTTPS listener, looked up by its port's server; plain HTTP has none.
    if (s.hostname.includes(':')) {
      if (s.certificate !== null && (!only || only.has(s.hostname))) servers.set(s.hostname, uidFor(s.certificate));
      continue;
    }
    if (!only || only.has(s.hostname)) servers.set(s.hostname, uidFor(s.certificate));
    if (s.aliases.length === 0) continue;
    const cert = s.certificate ? config.certificates[s.certificate] : undefined;
    for (const alias of s.aliases) {
      if (only && !only.has(alias)) continue;
      const covered = cert !== undefined && cert.hosts.some((h) => hostMatches(h, alias));
      servers.set(alias, covered ? uidFor(s.certificate) : EMPTY_UID);
    }
  }
  // from-to-www: the other name of the host redirects, and needs the host's certificate for HTTPS.
  for (const [s, from] of wwwRedirectNames(config.servers)) if (!only || only.has(from)) servers.set(from, uidFor(s.certificate));
  // The certificate of a Gateway's HTTPS listener without hostname, for names no host has (lua/gateway_frontend.lua).
  if (config.frontends?.catchAll && (!only || only.has(GATEWAY_CATCH_ALL))) servers.set(GATEWAY_CATCH_ALL, uidFor(config.frontends.catchAll));
  for (const [port, uid] of Object.entries(config.frontends?.portCatchAll ?? {})) {
    if (!only || only.has(`${GATEWAY_CATCH_ALL}${port}`)) servers.set(`${GATEWAY_CATCH_ALL}${port}`, uidFor(uid));
  }
  return { servers, certificates };
}

/** The servers map Lua accepted last, and the configuration it was made from. */
export interface HeldServers {
  readonly payload: ServersPayload;
  readonly config: Configuration;
}

/** What to post to bring Lua's servers map to `config`'s (null: nothing), and the map Lua then holds. */
export interface ServersChange {
  readonly part: ServersPayload | null;
  /** Called once NGINX took `part`: may update the held map in place (it is the caller's alone). */
  held(): HeldServers;
}

/** Most servers changed since the held map for which serversChange works from the changed servers alone. */
const FEW_SERVERS = 64;

/**
 * The change from the map Lua holds (`held`; null: it holds nothing known, the whole map goes) to
 * `config`'s. When few servers changed since `held.config` and the certificates (PEMs and names)
 * and Gateway listeners are the same, only the names those servers bear (and their from-to-www
 * twins) can map elsewhere: they alone are looked at, so a new host at 10k costs what it
 * changes; otherwise the whole map is made and compared (serversDelta). Same result either way.
 */
export function serversChange(held: HeldServers | null, config: Configuration): ServersChange {
  if (held !== null) {
    const names = changedServerNames(held.config, config);
    if (names !== null) return namesChange(held, config, names);
  }
  return wholeServersChange(held, config, serversPayload(config));
}

/** The change from the map Lua holds to `whole` (the whole map of `config`), found by comparing the two maps. */
export function wholeServersChange(held: HeldServers | null, config: Configuration, whole: ServersPayload): ServersChange {
  return { part: held === null ? whole : serversDelta(held.payload, whole), held: () => ({ payload: whole, config }) };
}

/** The names whose entry may differ between the two configurations' maps; null when that is not cheap to tell. */
function changedServerNames(before: Configuration, after: Configuration): Set<string> | null {
  if (!sameCertificates(before.certificates, after.certificates) || before.frontends !== after.frontends) return null;
  const changed = listChanges(before.servers, after.servers, FEW_SERVERS);
  if (changed === null) return null;
  // The same servers in another order (never, while servers are sorted by name) would change which of two same names wins.
  if (changed.removed.length + changed.added.length === 0 && !sameItems(before.servers, after.servers)) return null;
  const names = new Set<string>();
  for (const s of [...changed.removed, ...changed.added]) {
    for (const name of [s.hostname, ...s.aliases]) {
      names.add(name);
      // Its from-to-www twin: the name it redirects from, or whose redirect it takes.
      names.add(name.startsWith('www.') ? name.slice(4) : `www.${name}`);
    }
  }
  return names;
}

/** The same PEMs and names under the same uids (the build makes the map anew each time; its entries are few). */
function sameCertificates(a: Configuration['certificates'], b: Configuration['certificates']): boolean {
  if (a === b) return true;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const uid of keys) {
    const x = a[uid]!;
    const y = b[uid];
    if (x === y) continue;
    if (!y || x.pem !== y.pem || !sameItems(x.hosts, y.hosts)) return false;
  }
  return true;
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** serversDelta's rules, for `names` alone (every other name maps as in `held`). */
function namesChange(held: HeldServers, config: Configuration, names: ReadonlySet<string>): ServersChange {
  const next = hostCertificates(config, names);
  const servers: Record<string, string> = {};
  const certificates: Record<string, string> = {};
  const gone: string[] = [];
  const sorted = [...names].sort();
  for (const host of sorted) {
    const uid = next.servers.get(host);
    const before = held.payload.servers[host];
    if (uid === undefined) {
      if (before !== undefined && before !== EMPTY_UID) gone.push(host);
      continue;
    }
    if ((before ?? EMPTY_UID) === uid && (held.payload.certificates[uid] ?? '') === (next.certificates.get(uid) ?? '')) continue;
    servers[host] = uid;
    const pem = next.certificates.get(uid);
    if (pem !== undefined) certificates[uid] = pem;
  }
  for (const host of gone) servers[host] = EMPTY_UID;
  const part = Object.keys(servers).length > 0 ? { certificates, servers } : null;
  return {
    part,
    held() {
      const map = held.payload;
      for (const host of sorted) {
        const uid = next.servers.get(host);
        if (uid === undefined) delete map.servers[host];
        else map.servers[host] = uid;
      }
      for (const [uid, pem] of next.certificates) map.certificates[uid] = pem;
      return { payload: map, config };
    },
  };
}
