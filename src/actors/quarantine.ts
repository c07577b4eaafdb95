// The last line of defence: when NGINX refuses a configuration, find the objects it refuses and
// set them aside (src/model/core/quarantine.ts), so that the reload actor applies everything else in
// the same sync. NGINX's `file:line` is mapped back to the server and location that printed it
// (and so to the Ingress), a hint a probe confirms; where it names no location (an error found
// while merging, a server-level line), the Ingresses under suspicion are tested in small
// configurations with the same http-level context, halving the suspects each time; when none is
// refused on its own, the newest of a clash is found by bisecting the served order. Each
// `nginx -t` is counted and bounded; nothing a probe does not show guilty is set aside.
import type { Logger } from '../log.js';
import type { ModelBuilder } from '../model/build.js';
import { onlyIngressesView, type Quarantine } from '../model/core/quarantine.js';
import type { Configuration, IngressRef, Server } from '../model/core/types.js';
import type { StoreReader } from '../store/types.js';
import type { Ingress } from '../store/kube-types.js';
import { ingressesOf, type RenderedChunks } from '../render/engine.js';
import { overConfBudgets, type Budgets } from '../model/core/budgets.js';
import { streamSnippetsOf } from '../render/settings-directives.js';
import { readSnippet } from '../model/checks/snippet-check.js';

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

/** An Ingress shown guilty, what it is refused for, and (in a clash) the older ones it clashes with. */
interface Finding { key: string; why: string; output: string; clashesWith?: string[] }

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
    /** The Ingresses with snippets when NGINX refuses them together; null when it does not; undefined: not asked yet. */
    let snippetsRefused: string[] | null | undefined;
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
    // A port NGINX could not bind that a stream-snippet asks for (`nginx -t` binds nothing, so no
    // probe can show it): the newest Ingress whose snippet listens on it.
    const binder = newestOf(unboundSnippetListeners(refusal, view), view);
    let found: Finding[] = binder ? [{ key: binder, why: 'stream-snippet listens on a port NGINX could not bind', output: refusal.output }] : [];
    const culprit = refusal.rendered ? locate(refusal.output, refusal.rendered, refusal.config, store) : { kind: 'configmap', line: '' } as Culprit;
    // NGINX's line is a hint, never a verdict: a tenant writes what the lines around it say, and
    // in a clash NGINX names whichever object it read second. An object is set aside only when a
    // probe shows it guilty (refused on its own, or the one whose arrival makes NGINX refuse).
    const located = found.length === 0 && culprit.kind === 'ingress' && !quarantine.has('Ingress', culprit.key) ? culprit : null;
    if (located && !(await probe([located.key]))) {
      found = [{ key: located.key, why: located.field, output: lastProbeOutput }];
    } else if (found.length === 0 && !located && culprit.kind !== 'server' && !(await probe([]))) {
      // Refused without any Ingress: the settings (or the template) are at fault.
      if (store.options.configmap !== '' && !quarantine.has('ConfigMap', store.options.configmap) && store.getConfigMap(store.options.configmap)) {
        const why = culprit.kind === 'configmap' ? `NGINX refused a setting${culprit.line ? ` (${culprit.line})` : ''}: ${firstError(lastProbeOutput)}` : `NGINX refused the settings: ${firstError(lastProbeOutput)}`;
        quarantine.addConfigMap(store, why);
        logger.info({ configmap: store.options.configmap, reason: firstError(lastProbeOutput) }, `quarantined ConfigMap ${store.options.configmap}: its previous settings stay in use`);
        return rebuild();
      }
      logger.error({ reason, probes }, 'NGINX refuses the configuration even without any Ingress; nothing to set aside');
      return null;
    } else if (found.length === 0 && !located) {
      // The suspects: the Ingresses naming the server's host (its locations, or server-level
      // annotations), else those of every server NGINX has not run yet; else every Ingress.
      const servers = culprit.kind === 'server' ? [refusal.config.servers[culprit.index]!] : refusal.config.servers.filter((s) => !appliedServers.has(s));
      const hosts = new Set(servers.map((s) => s.hostname));
      const naming = view.listIngresses().filter((i) => (i.spec.rules ?? []).some((rule) => hosts.has(rule.host || '_'))).map(ingressKey);
      const suspects = unique([...servers.flatMap(ingressesOf).map(keyOf), ...naming]);
      let bad = await refused(suspects, null);
      if (bad.length === 0) {
        // Not one on its own: a clash among the Ingresses with snippets (a few small probes),
        // else with everything else (an unchanged Ingress may be involved), halving the table.
        const snippets = await refusedSnippets();
        const clash = snippets ? await firstClash(snippets) : null;
        if (clash) found = [clash];
        else bad = await refused(view.listIngresses().map(ingressKey), null);
      }
      if (found.length === 0) found = bad.map((b) => ({ key: b.key, why: 'refused by nginx -t when tested on its own', output: b.output }));
    }
    if (found.length === 0) {
      // Each passes on its own: two (or more) clash.
      const clash = await firstClash();
      if (clash) found = [clash];
    }
    logger.info({ probes, ms: Date.now() - started, culprits: found.map((f) => f.key), clashesWith: found.flatMap((f) => f.clashesWith ?? []) }, 'narrowing a configuration NGINX refused');
    if (found.length === 0) {
      logger.error({ reason, probes }, 'NGINX refuses the configuration and no object is shown guilty: nothing is quarantined, NGINX keeps running its configuration');
      return null;
    }
    for (const f of found) {
      const why = firstError(f.output);
      quarantine.addIngress(store, f.key, `${f.why}: ${why}`, undefined, f.clashesWith);
      logger.info({ ingress: f.key, reason: why, field: f.why, ...(f.clashesWith ? { clashesWith: f.clashesWith } : {}) }, `quarantined Ingress ${f.key}: NGINX refuses it; everything else is applied`);
    }
    return rebuild();

    /**
     * The Ingresses with snippets, in the served order, when NGINX refuses them together (one
     * probe, asked once per narrowing): only they write directives that can clash.
     */
    async function refusedSnippets(): Promise<string[] | null> {
      if (snippetsRefused !== undefined) return snippetsRefused;
      const all = view.listIngresses();
      const withSnippets = all.filter(hasSnippet(store.options.annotationsPrefix ?? 'nginx.ingress.kubernetes.io')).map(ingressKey);
      snippetsRefused = withSnippets.length > 1 && withSnippets.length < all.length && probes < maxProbes && !(await probe(withSnippets)) ? withSnippets : null;
      return snippetsRefused;
    }

    /**
     * The Ingress whose arrival, in the served order (oldest first), makes NGINX refuse: the
     * shortest refused prefix of that order ends with it. It is set aside; the older Ingresses it
     * clashes with (the shortest prefix refused together with it) stay. Ingresses with snippets
     * are searched first: only they write directives that can clash.
     */
    async function firstClash(refusedOrder?: string[]): Promise<Finding | null> {
      let order = refusedOrder ?? await refusedSnippets();
      if (!order) {
        order = view.listIngresses().map(ingressKey);
        if (await probe(order)) return null; // `nginx -t` does not refuse what NGINX refused
      }
      // Invariant: the settings alone pass (probed above), prefix `hi` is refused.
      let lo = 1;
      let hi = order.length;
      while (lo < hi) {
        if (probes >= maxProbes) return null;
        const mid = (lo + hi) >> 1;
        if (await probe(order.slice(0, mid))) lo = mid + 1;
        else hi = mid;
      }
      const newest = order[lo - 1]!;
      if (probes >= maxProbes) return null;
      if (!(await probe([newest]))) return { key: newest, why: 'refused by nginx -t when tested on its own', output: lastProbeOutput };
      // Its partner: the shortest prefix refused together with it ends with the one it clashes with.
      let a = 1;
      let b = lo - 1;
      while (a < b) {
        if (probes >= maxProbes) return null;
        const mid = (a + b) >> 1;
        if (await probe([...order.slice(0, mid), newest])) a = mid + 1;
        else b = mid;
      }
      const partner = order[a - 1]!;
      const pair = probes < maxProbes && !(await probe([partner, newest]));
      const output = lastProbeOutput;
      return {
        key: newest, output, clashesWith: [partner],
        why: pair ? `clashes with the older Ingress ${partner}, which is kept` : `clashes with older Ingresses (up to ${partner}), which are kept`,
      };
    }
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

/** Whether the Ingress has a `<prefix>/…snippet` annotation (--annotations-prefix). */
const hasSnippet = (prefix: string) => (i: Ingress) => Object.keys(i.metadata.annotations ?? {}).some((k) => k.startsWith(`${prefix}/`) && k.endsWith('snippet'));

/** The last of `keys` in the served order (the newest Ingress). */
function newestOf(keys: ReadonlySet<string>, view: StoreReader): string | null {
  if (keys.size === 0) return null;
  let out: string | null = null;
  for (const i of view.listIngresses()) if (keys.has(ingressKey(i))) out = ingressKey(i);
  return out;
}

/** The Ingresses whose stream-snippet listens on a port NGINX says it could not bind. */
export function unboundSnippetListeners(refusal: Refusal, view: StoreReader): Set<string> {
  const ports = new Set<string>();
  for (const m of refusal.output.matchAll(/bind\(\) to (?:\[[^\]]*\]|[^\s:]+):(\d+) failed/g)) ports.add(m[1]!);
  const out = new Set<string>();
  if (ports.size === 0) return out;
  for (const server of refusal.config.servers) {
    for (const { ingress, snippet } of streamSnippetsOf(server)) {
      if (out.has(ingress) || !view.getIngress(ingress)) continue;
      let directives: ReturnType<typeof readSnippet> = [];
      try { directives = readSnippet(snippet); } catch { continue; }
      // `listen [address:]port ...`: the port is the last `:`-separated part of the first argument.
      if (directives.some((d) => d.name === 'listen' && ports.has((d.args[0] ?? '').replace(/^.*:/, '')))) out.add(ingress);
    }
  }
  return out;
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
        const rows = text.split('\n');
        const row = rows[at] ?? '';
        if (i === chunks.length - 1) {
          const snippetOf = streamSnippetAt(rows, at, config);
          if (snippetOf) return { kind: 'ingress', key: snippetOf, field: 'stream-snippet' };
        }
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

/** The Ingress whose stream-snippet (rendered under `# stream-snippet of ns/name` in the stream block) holds row `at`. */
function streamSnippetAt(rows: string[], at: number, config: Configuration): string | null {
  for (let r = Math.min(at, rows.length - 1); r >= 0; r--) {
    const row = rows[r]!;
    if (row === '    # stream-snippet (ConfigMap)' || row === 'stream {') return null;
    const m = /^ {4}# stream-snippet of (\S+)$/.exec(row);
    if (!m) continue;
    const key = m[1]!;
    // The header must be one the renderer wrote for an Ingress with a stream-snippet: a hint only.
    return config.servers.some((s) => s.locations.some((l) => l.settings.streamSnippet !== '' && l.ingress && keyOf(l.ingress) === key)) ? key : null;
  }
  return null;
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
