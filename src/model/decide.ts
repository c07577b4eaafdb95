// The decision after a sync: nothing changed, a dynamic update is enough (backends' endpoints
// and policies, certificates and the host → certificate map, all pushed to Lua), or NGINX must
// reload (anything else, TCP/UDP endpoints included: they are static stream upstreams). Compares snapshots from ./hash.ts, fragment by fragment.
import type { ModelSnapshot, SnapshotDelta } from './hash.js';

export type DecisionKind = 'none' | 'dynamic' | 'reload';

export interface Decision {
  kind: DecisionKind;
  /** Human readable, e.g. "server a.example.com changed", "endpoints of default-web-80 changed". */
  reason: string;
  /** /configuration/backends must be posted. */
  backendsChanged: boolean;
  /** /configuration/servers must be posted: certificates or the host → certificate map changed. */
  serversChanged: boolean;
  /** TCP/UDP endpoints changed (always with kind 'reload'). */
  l4EndpointsChanged: boolean;
  /** Of the whole next configuration; stable across runs. */
  checksum: string;
}

const MAX_LISTED = 3;

function summarise(changes: string[]): string {
  if (changes.length <= MAX_LISTED) return changes.join('; ');
  return `${changes.slice(0, MAX_LISTED).join('; ')}; and ${changes.length - MAX_LISTED} more`;
}

/**
 * The entries of `next` to compare with `running`, in order: only the delta's keys when `next`
 * was derived from `running`'s very map (every other entry is the same), else all of them.
 */
function* candidates<H>(running: ReadonlyMap<string, H>, next: ReadonlyMap<string, H>, delta: SnapshotDelta<H> | undefined): Generator<[string, H]> {
  if (delta && delta.from === running) {
    for (const k of delta.keys) yield [k, next.get(k)!];
  } else {
    yield* next;
  }
}

/** Whether `running` may have keys `next` lacks. */
const mayHaveRemoved = <H>(running: ReadonlyMap<string, H>, delta: SnapshotDelta<H> | undefined) => !delta || delta.from !== running;

function structureChanges(running: ModelSnapshot, next: ModelSnapshot): string[] {
  const out: string[] = [];
  if (running.settings !== next.settings) out.push('ConfigMap settings changed');
  if (running.defaultCertificate !== next.defaultCertificate) out.push('default certificate changed');
  if (running.l4Structure !== next.l4Structure) out.push('TCP/UDP services changed');
  else if (running.l4EndpointsChecksum !== next.l4EndpointsChecksum) out.push('TCP/UDP endpoints changed');
  if (running.passthroughEndpoints !== next.passthroughEndpoints) out.push('ssl-passthrough endpoints changed');
  for (const [host, h] of candidates(running.servers, next.servers, next.serversDelta)) {
    const old = running.servers.get(host);
    if (!old) out.push(`server ${host} added`);
    else if (old.structure !== h.structure) out.push(`server ${host} changed`);
  }
  if (mayHaveRemoved(running.servers, next.serversDelta)) {
    for (const host of running.servers.keys()) if (!next.servers.has(host)) out.push(`server ${host} removed`);
  }
  return out;
}

function backendChanges(running: ModelSnapshot, next: ModelSnapshot): string[] {
  const out: string[] = [];
  for (const [name, h] of candidates(running.backends, next.backends, next.backendsDelta)) {
    const old = running.backends.get(name);
    if (!old) out.push(`backend ${name} added`);
    else {
      if (old.policy !== h.policy) out.push(`backend ${name} changed`);
      if (old.endpoints !== h.endpoints) out.push(`endpoints of ${name} changed`);
    }
  }
  if (mayHaveRemoved(running.backends, next.backendsDelta)) {
    for (const name of running.backends.keys()) if (!next.backends.has(name)) out.push(`backend ${name} removed`);
  }
  return out;
}

function certificateChanges(running: ModelSnapshot, next: ModelSnapshot): string[] {
  const out: string[] = [];
  for (const [host, h] of candidates(running.servers, next.servers, next.serversDelta)) {
    const old = running.servers.get(host);
    if (old && old.certificate !== h.certificate) out.push(`certificate of ${host} changed`);
  }
  if (out.length === 0) out.push('certificates changed');
  return out;
}

export function decide(running: ModelSnapshot | null, next: ModelSnapshot): Decision {
  if (running === null) {
    return {
      kind: 'reload', reason: 'no configuration running yet', backendsChanged: true, serversChanged: true,
      l4EndpointsChanged: true, checksum: next.checksum,
    };
  }
  const backendsChanged = running.backendsChecksum !== next.backendsChecksum;
  const serversChanged = running.certificatesChecksum !== next.certificatesChecksum
    || running.serversChecksum !== next.serversChecksum;
  const l4EndpointsChanged = running.l4EndpointsChecksum !== next.l4EndpointsChecksum;
  const flags = { backendsChanged, serversChanged, l4EndpointsChanged, checksum: next.checksum };
  if (running.checksum === next.checksum) return { kind: 'none', reason: 'configuration unchanged', ...flags };
  if (running.structureChecksum !== next.structureChecksum) {
    const changes = structureChanges(running, next);
    return { kind: 'reload', reason: summarise(changes.length > 0 ? changes : ['server order changed']), ...flags };
  }
  const changes: string[] = [];
  if (backendsChanged) changes.push(...backendChanges(running, next));
  if (serversChanged) changes.push(...certificateChanges(running, next));
  return { kind: 'dynamic', reason: summarise(changes), ...flags };
}
