// The decision after a sync: nothing changed, a dynamic update is enough (backends' endpoints
// and policies, certificates and the host → certificate map, the routes of dynamic hosts, all
// pushed to Lua), or NGINX must
// reload (anything else, TCP/UDP endpoints included: they are static stream upstreams).
// Compares two snapshots (./hash.ts) fragment by fragment: one object is equal to itself, and
// two objects of one name are compared by their hashes.
import { backendPolicyHash, certificateUids, endpointsKey, l4Hashes, serverStructureHash, settingsHash, type ModelSnapshot } from './hash.js';
import type { Backend, L4Service, Server } from './types.js';
import { sniRoutes } from './sni.js';

export type DecisionKind = 'none' | 'dynamic' | 'reload';

export interface Decision {
  kind: DecisionKind;
  /** Human readable, e.g. "server a.example.com changed", "endpoints of default-web-80 changed". */
  reason: string;
  /** /configuration/backends must be posted. */
  backendsChanged: boolean;
  /** /configuration/servers must be posted: certificates or the host → certificate map changed. */
  serversChanged: boolean;
  /** /configuration/routes must be posted: a dynamic host was added, changed or removed (../ingress/dynamic-routes.ts). */
  routesChanged: boolean;
  /** TCP/UDP endpoints changed (always with kind 'reload'). */
  l4EndpointsChanged: boolean;
}

const MAX_LISTED = 3;

function summarise(changes: string[]): string {
  if (changes.length <= MAX_LISTED) return changes.join('; ');
  return `${changes.slice(0, MAX_LISTED).join('; ')}; and ${changes.length - MAX_LISTED} more`;
}

/** Entries of one name that are not the same object; `before` or `after` is missing when the name was added or removed. */
interface Pair<T> {
  name: string;
  before: T | undefined;
  after: T | undefined;
}

interface ListDiff<T> {
  pairs: Array<Pair<T>>;
  /** The same entries in another order. */
  reordered: boolean;
}

/**
 * The entries of two lists that differ by identity (names are unique: the builder makes one
 * server per host and one backend per upstream name): in `after`'s order, then the
 * removed ones. Lists with the same names at the same places, as after most changes, are
 * compared place by place without a lookup; otherwise the names common to both lists' head and
 * tail are compared by place too, and only the middle where they differ (an added or removed
 * host: one entry) by name. (Exported for its test.)
 */
export function diffLists<T extends object>(before: readonly T[], after: readonly T[], name: (item: T) => string): ListDiff<T> {
  const pairs: Array<Pair<T>> = [];
  if (before === after) return { pairs, reordered: false };
  let aligned = before.length === after.length;
  for (let i = 0; aligned && i < after.length; i++) {
    const a = before[i]!;
    const b = after[i]!;
    if (a === b) continue;
    const n = name(b);
    if (name(a) === n) pairs.push({ name: n, before: a, after: b });
    else aligned = false;
  }
  if (aligned) return { pairs, reordered: false };
  pairs.length = 0;
  let head = 0;
  const shorter = Math.min(before.length, after.length);
  while (head < shorter && (before[head] === after[head] || name(before[head]!) === name(after[head]!))) head++;
  let tailBefore = before.length;
  let tailAfter = after.length;
  while (tailBefore > head && tailAfter > head
    && (before[tailBefore - 1] === after[tailAfter - 1] || name(before[tailBefore - 1]!) === name(after[tailAfter - 1]!))) {
    tailBefore--;
    tailAfter--;
  }
  const samePlace = (i: number, j: number) => {
    const a = before[i]!;
    const b = after[j]!;
    if (a !== b) pairs.push({ name: name(b), before: a, after: b });
  };
  for (let i = 0; i < head; i++) samePlace(i, i);
  const old = new Map<string, T>();
  for (let i = head; i < tailBefore; i++) old.set(name(before[i]!), before[i]!);
  const now = new Set<string>();
  for (let j = head; j < tailAfter; j++) {
    const b = after[j]!;
    const n = name(b);
    now.add(n);
    const a = old.get(n);
    if (a !== b) pairs.push({ name: n, before: a, after: b });
  }
  for (let j = tailAfter; j < after.length; j++) samePlace(j - tailAfter + tailBefore, j);
  for (let i = head; i < tailBefore; i++) {
    const a = before[i]!;
    if (!now.has(name(a))) pairs.push({ name: name(a), before: a, after: undefined });
  }
  return { pairs, reordered: pairs.length === 0 };
}

const hostnameOf = (s: Server) => s.hostname;
const backendNameOf = (b: Backend) => b.name;

/** 'structure' or 'endpoints' when the TCP/UDP services differ, structure first; null when equal. */
function l4Change(before: readonly L4Service[], after: readonly L4Service[]): 'structure' | 'endpoints' | null {
  if (before === after) return null;
  const a = l4Hashes(before);
  const b = l4Hashes(after);
  return a.structure !== b.structure ? 'structure' : a.endpoints !== b.endpoints ? 'endpoints' : null;
}

const l4EndpointsDiffer = (before: readonly L4Service[], after: readonly L4Service[]) =>
  before !== after && l4Hashes(before).endpoints !== l4Hashes(after).endpoints;

const passthroughMemos = new WeakMap<readonly Backend[], string>();

/**
 * The endpoints of the ssl-passthrough backends: with --enable-ssl-passthrough they are static
 * stream upstreams in nginx.conf, so a change of them needs a reload.
 */
function passthroughEndpoints(backends: readonly Backend[]): string {
  let text = passthroughMemos.get(backends);
  if (text === undefined) {
    text = '';
    for (const b of backends) if (b.sslPassthrough) text += `${b.name} ${endpointsKey(b.endpoints)}\n`;
    passthroughMemos.set(backends, text);
  }
  return text;
}

function structureChanges(running: ModelSnapshot, next: ModelSnapshot, servers: ListDiff<Server>): string[] {
  const out: string[] = [];
  if (running.settings !== next.settings && settingsHash(running.settings) !== settingsHash(next.settings)) out.push('ConfigMap settings changed');
  if (running.defaultCertificate !== next.defaultCertificate) out.push('default certificate changed');
  if (running.listenerPorts !== next.listenerPorts) out.push(`Gateway listener ports changed (${running.listenerPorts || 'none'} → ${next.listenerPorts || 'none'})`);
  if (running.backendTLS !== next.backendTLS) out.push(`BackendTLSPolicy TLS locations changed (${running.backendTLS || 'none'} → ${next.backendTLS || 'none'})`);
  const l4 = [l4Change(running.tcp, next.tcp), l4Change(running.udp, next.udp)];
  if (l4.includes('structure')) out.push('TCP/UDP services changed');
  else if (l4.includes('endpoints')) out.push('TCP/UDP endpoints changed');
  if (running.backends !== next.backends && passthroughEndpoints(running.backends) !== passthroughEndpoints(next.backends)) {
    out.push('ssl-passthrough endpoints changed');
  }
  // A dynamic host's name under a passthrough wildcard host is a line of the SNI map too.
  if (running.servers !== next.servers && sniRoutes(running.servers).text !== sniRoutes(next.servers).text) out.push('ssl-passthrough names changed');
  for (const { name, before, after } of servers.pairs) {
    // A dynamic host's routes are the router's table, not nginx.conf (routeChanges); its
    // Ingresses' stream-snippets are the stream block's, whichever way the host is served.
    if (dynamicOrAbsent(before) && dynamicOrAbsent(after)) {
      if (streamSnippetsOf(before) !== streamSnippetsOf(after)) out.push(`stream-snippet of ${name} changed`);
      continue;
    }
    if (!before) out.push(`server ${name} added`);
    else if (!after) out.push(`server ${name} removed`);
    else if (serverStructureHash(before) !== serverStructureHash(after)) out.push(`server ${name} changed`);
  }
  if (servers.reordered) out.push('server order changed');
  return out;
}

const dynamicOrAbsent = (s: Server | undefined): boolean => s === undefined || s.staticBecause === null;

/** The stream-snippets the server's locations carry, with their Ingresses ('' for none). */
function streamSnippetsOf(s: Server | undefined): string {
  let text = '';
  for (const loc of s?.locations ?? []) {
    if (loc.settings.streamSnippet !== '' && loc.ingress) text += `${loc.ingress.namespace}/${loc.ingress.name}\n${loc.settings.streamSnippet}\n`;
  }
  return text;
}

/** Dynamic hosts added, changed or removed; a host turning static or dynamic is a structure change as well. */
function routeChanges(servers: ListDiff<Server>): string[] {
  const out: string[] = [];
  for (const { name, before, after } of servers.pairs) {
    if (before?.staticBecause !== null && after?.staticBecause !== null) continue;
    if (before && after && before.staticBecause === null && after.staticBecause === null && serverStructureHash(before) === serverStructureHash(after)) continue;
    out.push(!before || before.staticBecause !== null ? `routes of ${name} added` : !after || after.staticBecause !== null ? `routes of ${name} removed` : `routes of ${name} changed`);
  }
  return out;
}

/** Every field but the endpoints the same value: the policy is equal without hashing (a backend rebuilt for its endpoints alone). */
function samePolicyFields(before: Backend, after: Backend): boolean {
  let count = 0;
  for (const k in after) {
    count++;
    if (k !== 'endpoints' && (!Object.hasOwn(before, k) || before[k as keyof Backend] !== after[k as keyof Backend])) return false;
  }
  for (const k in before) count--;
  return count === 0;
}

function backendChanges(running: ModelSnapshot, next: ModelSnapshot): string[] {
  const out: string[] = [];
  const backends = diffLists(running.backends, next.backends, backendNameOf);
  for (const { name, before, after } of backends.pairs) {
    if (!before) out.push(`backend ${name} added`);
    else if (!after) out.push(`backend ${name} removed`);
    else {
      if (!samePolicyFields(before, after) && backendPolicyHash(before) !== backendPolicyHash(after)) out.push(`backend ${name} changed`);
      if (before.endpoints !== after.endpoints && endpointsKey(before.endpoints) !== endpointsKey(after.endpoints)) out.push(`endpoints of ${name} changed`);
    }
  }
  if (backends.reordered) out.push('backend order changed');
  return out;
}

/** Changes of what /configuration/servers carries: the certificates and the host → certificate map. */
function certificateChanges(running: ModelSnapshot, next: ModelSnapshot, servers: ListDiff<Server>): string[] {
  const out: string[] = [];
  let hostsChanged = servers.reordered;
  for (const { name, before, after } of servers.pairs) {
    if (!before || !after) hostsChanged = true;
    else if (before.certificate !== after.certificate) out.push(`certificate of ${name} changed`);
  }
  const uidsChanged = running.certificates !== next.certificates && certificateUids(running.certificates) !== certificateUids(next.certificates);
  if (out.length === 0 && (hostsChanged || uidsChanged)) out.push('certificates changed');
  if (running.frontends !== next.frontends && JSON.stringify(running.frontends) !== JSON.stringify(next.frontends)) out.push('Gateway HTTPS listeners changed');
  return out;
}

export function decide(running: ModelSnapshot | null, next: ModelSnapshot): Decision {
  if (running === null) {
    return { kind: 'reload', reason: 'no configuration running yet', backendsChanged: true, serversChanged: true, routesChanged: true, l4EndpointsChanged: true };
  }
  const servers = diffLists(running.servers, next.servers, hostnameOf);
  const structure = structureChanges(running, next, servers);
  const backends = backendChanges(running, next);
  const certificates = certificateChanges(running, next, servers);
  const routes = routeChanges(servers);
  const flags = {
    routesChanged: routes.length > 0,
    backendsChanged: backends.length > 0,
    serversChanged: certificates.length > 0,
    l4EndpointsChanged: l4EndpointsDiffer(running.tcp, next.tcp) || l4EndpointsDiffer(running.udp, next.udp),
  };
  if (structure.length > 0) return { kind: 'reload', reason: summarise(structure), ...flags };
  const changes = [...routes, ...backends, ...certificates];
  if (changes.length === 0) return { kind: 'none', reason: 'configuration unchanged', ...flags };
  return { kind: 'dynamic', reason: summarise(changes), ...flags };
}
