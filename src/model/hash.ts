// Model snapshots: hashes of each server and backend fragment, and checksums of the parts a
// decision compares. Fragments are hashed once per object (the builder hands back unchanged
// fragments as the same objects), so a snapshot after a small change costs little.
import { createHash } from 'node:crypto';
import stringify from 'fast-json-stable-stringify';
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
  servers: Map<string, ServerHashes>;
  backends: Map<string, BackendHashes>;
  settings: string;
  defaultCertificate: string | null;
  /** TCP/UDP services without their endpoints. */
  l4Structure: string;
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
}

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

interface ServerMemo {
  hashes: ServerHashes;
  /** `<host> <structure>\n` and `<host> <certificate uid>\n`, the lines of the server checksums. */
  structureLine: string;
  certificateLine: string;
}

interface BackendMemo {
  hashes: BackendHashes;
  line: string;
}

/** The server part of a snapshot, shared by snapshots of the same servers array. */
interface ServersPart {
  servers: Map<string, ServerHashes>;
  structure: string;
  certificates: string;
}

interface BackendsPart {
  backends: Map<string, BackendHashes>;
  checksum: string;
}

// Memos of pure functions keyed by object identity; they hold nothing observable. The builder
// hands back unchanged servers, backends and lists as the same objects.
const serverMemos = new WeakMap<Server, ServerMemo>();
const backendMemos = new WeakMap<Backend, BackendMemo>();
const settingsHashes = new WeakMap<NginxSettings, string>();
const serverParts = new WeakMap<readonly Server[], ServersPart>();
const backendParts = new WeakMap<readonly Backend[], BackendsPart>();

function serverMemo(s: Server): ServerMemo {
  let m = serverMemos.get(s);
  if (m === undefined) {
    const structure = sha1(stringify({ ...s, certificate: null, tlsSecret: null }));
    m = {
      hashes: { structure, certificate: s.certificate },
      structureLine: `${s.hostname} ${structure}\n`,
      certificateLine: `${s.hostname} ${s.certificate ?? '-'}\n`,
    };
    serverMemos.set(s, m);
  }
  return m;
}

function backendMemo(b: Backend): BackendMemo {
  let m = backendMemos.get(b);
  if (m === undefined) {
    const hashes = { policy: sha1(stringify({ ...b, endpoints: [] })), endpoints: sha1(stringify(b.endpoints)) };
    m = { hashes, line: `${b.name} ${hashes.policy} ${hashes.endpoints}\n` };
    backendMemos.set(b, m);
  }
  return m;
}

function serversPart(list: readonly Server[]): ServersPart {
  let part = serverParts.get(list);
  if (part === undefined) {
    const servers = new Map<string, ServerHashes>();
    const structure = new Array<string>(list.length);
    const certificates = new Array<string>(list.length);
    for (let i = 0; i < list.length; i++) {
      const s = list[i]!;
      const m = serverMemo(s);
      servers.set(s.hostname, m.hashes);
      structure[i] = m.structureLine;
      certificates[i] = m.certificateLine;
    }
    part = { servers, structure: sha1(structure.join('')), certificates: sha1(certificates.join('')) };
    serverParts.set(list, part);
  }
  return part;
}

function backendsPart(list: readonly Backend[]): BackendsPart {
  let part = backendParts.get(list);
  if (part === undefined) {
    const backends = new Map<string, BackendHashes>();
    const lines = new Array<string>(list.length);
    for (let i = 0; i < list.length; i++) {
      const b = list[i]!;
      const m = backendMemo(b);
      backends.set(b.name, m.hashes);
      lines[i] = m.line;
    }
    part = { backends, checksum: sha1(lines.join('')) };
    backendParts.set(list, part);
  }
  return part;
}

function settingsHash(s: NginxSettings): string {
  let h = settingsHashes.get(s);
  if (h === undefined) {
    h = sha1(stringify(s));
    settingsHashes.set(s, h);
  }
  return h;
}

function l4Parts(tcp: L4Service[], udp: L4Service[]): { structure: string; endpoints: string } {
  const strip = (l: L4Service[]) => l.map((s) => ({ ...s, endpoints: [] }));
  return {
    structure: sha1(stringify({ tcp: strip(tcp), udp: strip(udp) })),
    endpoints: sha1(stringify({ tcp: tcp.map((s) => s.endpoints), udp: udp.map((s) => s.endpoints) })),
  };
}

export function snapshot(config: Configuration): ModelSnapshot {
  const settings = settingsHash(config.settings);
  const l4 = l4Parts(config.tcpEndpoints, config.udpEndpoints);
  const serverPart = serversPart(config.servers);
  const backendPart = backendsPart(config.backends);
  const structureChecksum = sha1(
    `settings ${settings}\ndefault-certificate ${config.defaultCertificate ?? '-'}\nl4 ${l4.structure} ${l4.endpoints}\nservers ${serverPart.structure}\n`,
  );
  const backendsChecksum = backendPart.checksum;
  const certificatesChecksum = sha1(Object.keys(config.certificates).sort().join('\n'));
  const serversChecksum = serverPart.certificates;
  const checksum = createHash('sha256')
    .update([structureChecksum, backendsChecksum, certificatesChecksum, serversChecksum, l4.endpoints].join('\n'))
    .digest('hex');
  return {
    servers: serverPart.servers, backends: backendPart.backends, settings, defaultCertificate: config.defaultCertificate,
    l4Structure: l4.structure, structureChecksum, backendsChecksum, certificatesChecksum, serversChecksum,
    l4EndpointsChecksum: l4.endpoints, checksum,
  };
}
