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

// Memo of a pure function keyed by object identity; holds nothing observable.
const serverHashes = new WeakMap<Server, string>();
const backendHashes = new WeakMap<Backend, BackendHashes>();
const settingsHashes = new WeakMap<NginxSettings, string>();

function serverStructure(s: Server): string {
  let h = serverHashes.get(s);
  if (h === undefined) {
    h = sha1(stringify({ ...s, certificate: null, tlsSecret: null }));
    serverHashes.set(s, h);
  }
  return h;
}

function backendHash(b: Backend): BackendHashes {
  let h = backendHashes.get(b);
  if (h === undefined) {
    h = { policy: sha1(stringify({ ...b, endpoints: [] })), endpoints: sha1(stringify(b.endpoints)) };
    backendHashes.set(b, h);
  }
  return h;
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
  const servers = new Map<string, ServerHashes>();
  const settings = settingsHash(config.settings);
  const l4 = l4Parts(config.tcpEndpoints, config.udpEndpoints);
  const structure = createHash('sha1')
    .update(`settings ${settings}\ndefault-certificate ${config.defaultCertificate ?? '-'}\nl4 ${l4.structure} ${l4.endpoints}\n`);
  const certs = createHash('sha1');
  for (const s of config.servers) {
    const h = { structure: serverStructure(s), certificate: s.certificate };
    servers.set(s.hostname, h);
    structure.update(`${s.hostname} ${h.structure}\n`);
    certs.update(`${s.hostname} ${s.certificate ?? '-'}\n`);
  }
  const backends = new Map<string, BackendHashes>();
  const backendLines = createHash('sha1');
  for (const b of config.backends) {
    const h = backendHash(b);
    backends.set(b.name, h);
    backendLines.update(`${b.name} ${h.policy} ${h.endpoints}\n`);
  }
  const structureChecksum = structure.digest('hex');
  const backendsChecksum = backendLines.digest('hex');
  const certificatesChecksum = sha1(Object.keys(config.certificates).sort().join('\n'));
  const serversChecksum = certs.digest('hex');
  const checksum = createHash('sha256')
    .update([structureChecksum, backendsChecksum, certificatesChecksum, serversChecksum, l4.endpoints].join('\n'))
    .digest('hex');
  return {
    servers, backends, settings, defaultCertificate: config.defaultCertificate, l4Structure: l4.structure,
    structureChecksum, backendsChecksum, certificatesChecksum, serversChecksum, l4EndpointsChecksum: l4.endpoints, checksum,
  };
}
