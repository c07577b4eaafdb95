// The last line of defence: when NGINX refuses a configuration, find the objects it refuses and
// set them aside (src/model/core/quarantine.ts), so that the reload actor applies everything else in
// the same sync. NGINX's `file:line` is mapped back to the server and location that printed it
// (and so to the Ingress); where it names no location (an error found while merging, a
// server-level line), the Ingresses under suspicion are tested in small configurations with the
// same http-level context, halving the suspects each time. Each `nginx -t` is counted and bounded.
import type { Logger } from '../log.js';
import type { ModelBuilder } from '../model/build.js';
import { onlyIngressesView, type Quarantine } from '../model/core/quarantine.js';
import type { Configuration, IngressRef, Server } from '../model/core/types.js';
import type { StoreReader } from '../store/types.js';
import type { Ingress } from '../store/kube-types.js';
import { ingressesOf, type RenderedChunks } from '../render/engine.js';
import { overConfBudgets, type Budgets } from '../model/core/budgets.js';

/** What the reload actor knows of a configuration NGINX refused. */
export interface Refusal {
  config: Configuration;
  /** The render of `config`; null when rendering the whole configuration failed. */
  rendered: RenderedChunks | null;
  /** `nginx -t`'s output (or the render error). */
  output: string;
}

/** Tests a configuration with `nginx -t` (the reload actor's own way of doing it). */
export type ConfigTest = (config: Configuration) => Promise<{ ok: boolean; output: string }>;

export interface Narrower {
  /**
   * Sets aside what NGINX refuses in `refusal` and returns the configuration without it, or null
   * when nothing can be singled out (within the budget).
   */
  narrow(refusal: Refusal, test: ConfigTest): Promise<Configuration | null>;
  /** Called when NGINX took `config`: the servers it had are no longer suspects. */
  applied(config: Configuration): void;
  /** What NGINX's error points at, in the model's words (for an error nothing could be set aside for). */
  explain(refusal: Refusal): string;
  /**
   * Sets aside the Ingresses whose locations pass the nginx.conf budgets in `rendered` and
   * returns the configuration without them, or null when none does (src/model/core/budgets.ts).
   */
  overBudget(rendered: RenderedChunks): Configuration | null;
}

export interface NarrowerDeps {
  store: StoreReader;
  quarantine: Quarantine;
  /** The sync's model builder: the narrowed configuration is built by it, from the quarantined view. */
  builder: ModelBuilder;
  /** A fresh builder for probes (small configurations of a few Ingresses). */
  probeBuilder: () => ModelBuilder;
  logger: Logger;
  /** Most `nginx -t` runs of probes per narrowing (default 48). */
  maxProbes?: number;
  /** The budgets of nginx.conf's size; none when absent. */
  budgets?: Budgets;
}

/** Where `nginx -t` says the error is. */
export type Culprit =
  | { kind: 'ingress'; key: string; field: string }
  | { kind: 'server'; index: number }
  | { kind: 'configmap'; line: string }
  | { kind: 'unknown' };

const keyOf = (r: IngressRef) => `${r.namespace}/${r.name}`;
const ingressKey = (i: Ingress) => `${i.metadata.namespace ?? 'default'}/${i.metadata.name}`;

export function createNarrower(deps: NarrowerDeps): Narrower {
  const { store, quarantine, logger } = deps;
  const maxProbes = deps.maxProbes ?? 48;
  /** Servers of the last configuration NGINX took: unchanged servers are not suspects. */
  let appliedServers = new WeakSet<Server>();

  async function narrow(refusal: Refusal, test: ConfigTest): Promise<Configuration | null> {
    const started = Date.now();
    let probes = 0;
    const view = quarantine.view(store);
    const reason = firstError(refusal.output);

    let lastProbeOutput = '';
    /** Does NGINX take a configuration of just these Ingresses (and the same ConfigMap)? */
    async function probe(keys: string[]): Promise<boolean> {
      probes++;
      const { config } = deps.probeBuilder().build(onlyIngressesView(view, new Set(keys)));
      const r = await test(config);
      if (!r.ok) lastProbeOutput = r.output;
      return r.ok;
    }

    /** Every key among `keys` NGINX refuses on its own (halving), within the probe budget, with what NGINX said. */
    async function refused(keys: string[], output: string | null): Promise<Array<{ key: string; output: string }>> {
      if (keys.length === 0 || probes >= maxProbes) return [];
      if (output === null) {
        if (await probe(keys)) return [];
        output = lastProbeOutput;
      }
      if (keys.length === 1) return [{ key: keys[0]!, output }];
      const half = keys.length >> 1;
      return [...await refused(keys.slice(0, half), null), ...await refused(keys.slice(half), null)];
    }

    // An entry of a TCP/UDP services ConfigMap: a port NGINX cannot bind, or a line of its stream server.
    const entries = serviceEntryCulprits(refusal, store).filter((e) => !quarantine.has('ConfigMap', `${e.configmap}:${e.port}`));
    if (entries.length > 0) {
      for (const e of entries) {
        quarantine.addServiceEntry(store, e.configmap, e.port, `data["${e.port}"]: NGINX refuses it: ${reason}; the other entries are served`);
        logger.info({ configmap: e.configmap, port: e.port, reason }, `quarantined entry ${e.port} of ConfigMap ${e.configmap}: NGINX refuses it; everything else is applied`);
      }
      return rebuild();
    }
    const culprit = refusal.rendered ? locate(refusal.output, refusal.rendered, refusal.config, store) : { kind: 'configmap', line: '' } as Culprit;
    let found: Array<{ key: string; why: string; output: string }> = [];
    if (culprit.kind === 'ingress' && !quarantine.has('Ingress', culprit.key)) {
      found = [{ key: culprit.key, why: culprit.field, output: refusal.output }];
    } else if (culprit.kind === 'configmap' && store.options.configmap !== '' && !quarantine.has('ConfigMap', store.options.configmap) && store.getConfigMap(store.options.configmap)) {
      quarantine.addConfigMap(store, `NGINX refused a setting${culprit.line ? ` (${culprit.line})` : ''}: ${reason}`);
      logger.info({ configmap: store.options.configmap, reason }, `quarantined ConfigMap ${store.options.configmap}: its previous settings stay in use`);
      return rebuild();
    } else if (culprit.kind !== 'server' && !(await probe([]))) {
      // Refused without any Ingress: the settings (or the template) are at fault.
      if (store.options.configmap !== '' && !quarantine.has('ConfigMap', store.options.configmap) && store.getConfigMap(store.options.configmap)) {
        const why = firstError(lastProbeOutput);
        quarantine.addConfigMap(store, `NGINX refused the settings: ${why}`);
        logger.info({ configmap: store.options.configmap, reason: why }, `quarantined ConfigMap ${store.options.configmap}: its previous settings stay in use`);
        return rebuild();
      }
      logger.error({ reason, probes }, 'NGINX refuses the configuration even without any Ingress; nothing to set aside');
      return null;
    } else {
      // The suspects: the Ingresses naming the server's host (its locations, or server-level
      // annotations), else those of every server NGINX has not run yet; else every Ingress.
      const servers = culprit.kind === 'server' ? [refusal.config.servers[culprit.index]!] : refusal.config.servers.filter((s) => !appliedServers.has(s));
      const hosts = new Set(servers.map((s) => s.hostname));
      const naming = view.listIngresses().filter((i) => (i.spec.rules ?? []).some((rule) => hosts.has(rule.host || '_'))).map(ingressKey);
      let suspects = unique([...servers.flatMap(ingressesOf).map(keyOf), ...naming]);
      let bad = await refused(suspects, null);
      if (bad.length === 0) {
        // Not one on its own: with everything else, then (an unchanged Ingress may be involved).
        suspects = view.listIngresses().map(ingressKey);
        bad = await refused(suspects, null);
      }
      found = bad.map((b) => ({ key: b.key, why: 'refused by nginx -t when tested on its own', output: b.output }));
    }
    logger.info({ probes, ms: Date.now() - started, culprits: found.map((f) => f.key) }, 'narrowing a configuration NGINX refused');
    if (found.length === 0) return null;
    for (const f of found) {
      const why = firstError(f.output);
      quarantine.addIngress(store, f.key, `${f.why}: ${why}`);
      logger.info({ ingress: f.key, reason: why, field: f.why }, `quarantined Ingress ${f.key}: NGINX refuses it; everything else is applied`);
    }
    return rebuild();
  }

  function rebuild(): Configuration {
    return deps.builder.build(quarantine.view(store)).config;
  }

  return {
    narrow,
    explain(refusal) {
      if (!refusal.rendered) return firstError(refusal.output);
      const c = locate(refusal.output, refusal.rendered, refusal.config, store);
      const where = c.kind === 'ingress' ? `Ingress ${c.key}, ${c.field}`
        : c.kind === 'server' ? `server ${refusal.config.servers[c.index]?.hostname ?? '?'}`
          : c.kind === 'configmap' ? `the settings (${c.line || `ConfigMap ${store.options.configmap}`})` : 'no object (found while merging, or in the template)';
      return `${firstError(refusal.output)} [${where}]`;
    },
    applied(config) {
      appliedServers = new WeakSet(config.servers);
      quarantine.accepted(quarantine.view(store));
    },
    overBudget(rendered) {
      const b = deps.budgets;
      if (!b) return null;
      // No Ingress can take more than the whole text: a small configuration is not counted.
      const limits = [b.maxBytesPerIngress, b.maxBytesPerNamespace].filter((n) => n > 0);
      if (limits.length === 0 || rendered.chunks.reduce((n, c) => n + c.length, 0) <= Math.min(...limits)) return null;
      const over = overConfBudgets(rendered.ingressBytes(), quarantine.view(store).listIngresses().map(ingressKey), b);
      if (over.length === 0) return null;
      for (const o of over) {
        quarantine.addIngress(store, o.key, o.reason, o.scope);
        logger.warn({ ingress: o.key, reason: o.reason, scope: o.scope }, `Ingress ${o.key} set aside: ${o.reason}`);
      }
      return rebuild();
    },
  };
}

function unique(keys: string[]): string[] {
  return [...new Set(keys)];
}

/** The first `[emerg]` (or other) line of NGINX's output, without the file and prefix noise. */
export function firstError(output: string): string {
  const line = output.split('\n').find((l) => /\[(emerg|alert|crit|error)\]/.test(l)) ?? output.split('\n')[0] ?? '';
  return line.replace(/^nginx: \[\w+\] /, '').replace(/^\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d \[\w+\] \d+#\d+: /, '')
    .replace(/ in \S+:\d+\s*$/, '').trim().slice(0, 500);
}

/**
 * Maps NGINX's `in FILE:LINE` to the part of the rendered configuration that printed the line:
 * a location (its `set $namespace` / `set $ingress_name` give the Ingress), a server, or the
 * http-level settings of the ConfigMap.
 */
export function locate(output: string, rendered: RenderedChunks, config: Configuration, store: StoreReader): Culprit {
  const m = /\[emerg\][^\n]* in \S+:(\d+)\s*$/m.exec(output);
  if (!m) return { kind: 'unknown' };
  const line = Number(m[1]);
  let start = 1;
  const { chunks } = rendered;
  for (let i = 0; i < chunks.length; i++) {
    const text = chunks[i]!;
    const lines = countLines(text);
    if (line < start + lines || i === chunks.length - 1) {
      const at = line - start;
      if (i === 0 || i === chunks.length - 1) {
        const row = text.split('\n')[at] ?? '';
        // Errors found while merging are reported at the end of the block: they name no line.
        if (row.trim() === '}' || row.trim() === '') return { kind: 'unknown' };
        if (i === 0 && rendered.httpLevel !== '' && rendered.httpLevel.includes(row.trim())) return { kind: 'unknown' };
        return store.options.configmap ? { kind: 'configmap', line: row.trim().slice(0, 200) } : { kind: 'unknown' };
      }
      return inServer(text, at, i - 1, config.servers[i - 1]!);
    }
    start += lines;
  }
  return { kind: 'unknown' };
}

/**
 * The entries of the TCP/UDP services ConfigMaps NGINX's error is about: a port it could not bind
 * (`bind() to 0.0.0.0:5432 failed`: no line is named), or the line of an entry's upstream or
 * server in the stream block, at the end of the rendered text.
 */
export function serviceEntryCulprits(refusal: Refusal, store: StoreReader): Array<{ configmap: string; port: string }> {
  const ports = new Set<number>();
  for (const m of refusal.output.matchAll(/bind\(\) to (?:\[[^\]]*\]|[^\s:]+):(\d+) failed/g)) ports.add(Number(m[1]));
  const line = /\[emerg\][^\n]* in \S+:(\d+)\s*$/m.exec(refusal.output);
  if (line && refusal.rendered) {
    const { chunks } = refusal.rendered;
    const before = chunks.slice(0, -1).reduce((n, c) => n + countLines(c), 0);
    const at = Number(line[1]) - 1 - before;
    const rows = chunks[chunks.length - 1]!.split('\n');
    if (at >= 0 && at < rows.length) {
      // The entry's upstream opens its block; its server ends with `proxy_pass <proto>-<port>;` and `}`.
      for (let r = at; r >= 0; r--) {
        const m = /^ {4}upstream (tcp|udp)-(\d+) \{$/.exec(rows[r]!);
        if (!m) continue;
        let end = r;
        while (end < rows.length && rows[end] !== `        proxy_pass ${m[1]}-${m[2]};`) end++;
        if (at <= end + 1) ports.add(Number(m[2]));
        break;
      }
    }
  }
  const out: Array<{ configmap: string; port: string }> = [];
  for (const [list, configmap] of [[refusal.config.tcpEndpoints, store.options.tcpServicesConfigmap], [refusal.config.udpEndpoints, store.options.udpServicesConfigmap]] as const) {
    for (const svc of list) if (ports.has(svc.port) && configmap) out.push({ configmap, port: String(svc.port) });
  }
  return out;
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** The Ingress of the location block around line `at` of a server's text, if the block is one of its locations. */
function inServer(text: string, at: number, index: number, server: Server): Culprit {
  const rows = text.split('\n');
  let open = -1;
  for (let r = Math.min(at, rows.length - 1); r >= 0; r--) {
    if (/^ {8}location /.test(rows[r]!)) { open = r; break; }
    if (/^ {4}server \{/.test(rows[r]!)) break;
  }
  if (open < 0) return { kind: 'server', index };
  let close = open;
  while (close < rows.length && rows[close] !== '        }') close++;
  if (at > close) return { kind: 'server', index };
  let namespace: string | undefined;
  let name: string | undefined;
  for (let r = open + 1; r < close; r++) {
    namespace ??= /^ {12}set \$namespace "([a-z0-9.-]*)";$/.exec(rows[r]!)?.[1];
    name ??= /^ {12}set \$ingress_name "([a-z0-9.-]*)";$/.exec(rows[r]!)?.[1];
  }
  // The block must be a location the model made for that Ingress on this server.
  const ingress = server.locations.find((l) => l.ingress && l.ingress.namespace === namespace && l.ingress.name === name)?.ingress;
  if (!ingress) return { kind: 'server', index };
  const directive = (rows[at] ?? '').trim().split(/\s+/)[0] ?? '';
  const snippet = rows.slice(open, at + 1).some((r) => r.trim() === '# configuration-snippet');
  const matcher = rows[open]!.trim().slice('location '.length, -2);
  return { kind: 'ingress', key: keyOf(ingress), field: snippet ? 'configuration-snippet' : `location ${matcher} of ${server.hostname} (${directive})` };
}
