// The Lua wire payloads, as ingress-nginx posts them: /configuration/backends (the backends)
// and /configuration/servers ({ certificates: uid → PEM, servers: hostname → uid }). Hosts
// without a certificate map to EMPTY_UID so Lua forgets any certificate it had for them.
import type { Backend, Configuration } from './types.js';

export const EMPTY_UID = '-1';

export interface ServersPayload {
  certificates: Record<string, string>;
  servers: Record<string, string>;
}

export function backendsPayload(config: Configuration): Backend[] {
  const list = config.backends;
  for (let i = 1; i < list.length; i++) {
    if (list[i - 1]!.name > list[i]!.name) return [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  return [...list];
}

/** Elements per cached run of the serialised list. */
const RUN = 128;

/**
 * JSON.stringify for a list of backends (or any list), byte for byte, that serialises each
 * element object once and reuses the text while the same object comes back: the model hands
 * back unchanged backends as the same objects, so after one endpoint change one backend of
 * thousands is serialised again. The joined text of each run of RUN elements is reused too
 * while the run holds the same elements. The elements must not be mutated once serialised.
 */
export function createBackendsSerialiser(): (list: readonly unknown[]) => string {
  const memo = new WeakMap<object, string>();
  let prevList: readonly unknown[] = [];
  let prevRuns: string[] = [];
  const text = (item: unknown): string => {
    if (item === null || typeof item !== 'object') return JSON.stringify(item) ?? 'null';
    let t = memo.get(item);
    if (t === undefined) {
      t = JSON.stringify(item) ?? 'null';
      memo.set(item, t);
    }
    return t;
  };
  return (list) => {
    const runs = new Array<string>(Math.ceil(list.length / RUN));
    for (let r = 0; r < runs.length; r++) {
      const from = r * RUN;
      const to = Math.min(from + RUN, list.length);
      let same = Math.min(from + RUN, prevList.length) === to;
      for (let i = from; same && i < to; i++) same = list[i] === prevList[i];
      if (same) {
        runs[r] = prevRuns[r]!;
        continue;
      }
      const parts = new Array<string>(to - from);
      for (let i = from; i < to; i++) parts[i - from] = text(list[i]);
      runs[r] = parts.join(',');
    }
    prevList = list.slice();
    prevRuns = runs;
    return `[${runs.join(',')}]`;
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

export function serversPayload(config: Configuration): ServersPayload {
  const servers = new Map<string, string>();
  const certificates = new Map<string, string>();
  const names = new Set(config.servers.map((s) => s.hostname));
  const uidFor = (uid: string | null): string => {
    if (uid === null) return EMPTY_UID;
    const cert = config.certificates[uid];
    if (!cert) return EMPTY_UID;
    certificates.set(uid, cert.pem);
    return uid;
  };
  for (const s of config.servers) {
    servers.set(s.hostname, uidFor(s.certificate));
    const cert = s.certificate ? config.certificates[s.certificate] : undefined;
    for (const alias of s.aliases) {
      const covered = cert !== undefined && cert.hosts.some((h) => hostMatches(h, alias));
      servers.set(alias, covered ? uidFor(s.certificate) : EMPTY_UID);
    }
  }
  // from-to-www: the other name of the host redirects, and needs the host's certificate for HTTPS.
  for (const s of config.servers) {
    if (!s.redirectFromToWWW || s.hostname === '_') continue;
    const from = s.hostname.startsWith('www.') ? s.hostname.slice(4) : `www.${s.hostname}`;
    if (names.has(from) || servers.has(from)) continue;
    servers.set(from, uidFor(s.certificate));
  }
  return { certificates: sortedRecord(certificates), servers: sortedRecord(servers) };
}
