// The renderer: parses the templates in nginx/ once, renders nginx.conf from a Configuration
// and an NginxRuntime. Each server is rendered from its own fragment, cached by the identity of
// its model object, so a one-server change re-renders one server.
import { listenerPortServers } from './listener-ports.js';
import { createHash, hash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import stringify from 'fast-json-stable-stringify';
import { Liquid, type Template } from 'liquidjs';
import type { Logger } from '../log.js';
import type { Configuration, IngressRef, Location, Server } from '../model/core/types.js';
import { wwwRedirectNames } from '../model/core/www-names.js';
import { leftOutPath, reloadLogPath, tempPaths, type NginxRuntime } from './runtime.js';
import { registerFilters, RenderError, cidr, listenAddress, quoteLiteral } from './filters.js';
import { prefixError, serverView, type RenderProblem, type ServerContext } from './view.js';
import { RENDER_BLOCKS } from './blocks/index.js';
import type { RenderBlock } from './blocks/types.js';
import { nextUpstream } from './blocks/proxy.js';
import { passthroughOff, passthroughStream } from './blocks/sslpassthrough.js';
import type { AuxiliaryFile, HttpFeature } from './blocks/types.js';
import { httpProxyHeaders, passPortSource } from './proxy-headers.js';
import type { NginxSettings } from '../model/core/config/settings.js';
import { streamServers } from './stream.js';
import {
  eventsDirectives, forwardedForProxyProtocol, httpDirectives, httpSnippet, listenAddresses, configuredLogTargets, httpAccessLog, luaSharedDicts, mainDirectives, streamDirectives, streamSnippets,
} from './settings-directives.js';
import { geoip2Setup } from './geoip.js';
import { MODSECURITY_MODULE, modsecurityFiles, modsecurityHttp } from './blocks/modsecurity.js';
import { opentelemetryHttp } from './blocks/opentelemetry.js';
import { metricsLogHttp } from './metrics-log.js';
import { createHttpUsesMemo, usesOf, type ServerHttpUses } from './http-uses.js';
import type { IngressStreamSnippet } from './settings-directives.js';
import { httpTLSSettings, tlsSettingsFiles } from './tls-settings.js';
import { CONFIGURATION_BODY_BYTES } from './control.js';
import { createMainTextCache, printsChecksumOnly } from './main-text.js';
import { REQUEST_ID_POOL_TOKEN, readsRequestIdElsewhere } from './request-id.js';
import {
  LOCATION_VARIABLES_READ_TOKEN, backendTLSFiles, backendTLSLocationsText, readsLocationVariables, readsProxyHost, servesDynamicHosts, withBackendTLS, withRouterProxyHost,
} from './dynamic-routes.js';

export type { AuxiliaryFile, RenderProblem };

export interface RenderResult {
  text: string;
  /** sha256 identifying the rendered text; also served on the status port at /configuration-checksum. */
  checksum: string;
  /** Things the operator should know (GeoIP unavailable, unsupported features). */
  warnings: string[];
  /** Values the renderer refused, per location or server (the rest rendered). */
  problems: RenderProblem[];
}

/**
 * The rendered nginx.conf as pieces whose concatenation is the text (no 40 MB join needed):
 * the head, one piece per server of the configuration (in its order; '' for a server left out),
 * and the tail.
 */
export interface RenderedChunks {
  chunks: string[];
  checksum: string;
  warnings: string[];
  problems: RenderProblem[];
  /** The http-level directives the servers asked for (rate-limit zones), as printed in the head. */
  httpLevel: string;
  /** Whether NGINX running this text writes the reload log (a custom template may not). */
  writesReloadLog: boolean;
  /** `namespace/name` → bytes of nginx.conf its locations take (the budgets of src/model/core/budgets.ts); counted when asked. */
  ingressBytes(): ReadonlyMap<string, number>;
}

export interface Renderer {
  /** nginx.conf for this configuration; throws RenderError naming the field it refused. */
  render(config: Configuration, runtime: NginxRuntime): string;
  renderWithWarnings(config: Configuration, runtime: NginxRuntime): RenderResult;
  /** As renderWithWarnings, without joining the text: for writing it out (see writeChunks). */
  renderChunks(config: Configuration, runtime: NginxRuntime): RenderedChunks;
  /** Re-reads nginx/; on a parse error keeps the previous templates. */
  reloadTemplates(): { ok: true } | { ok: false; error: string };
  /** Counters for tests and debug output: server fragments rendered (cache misses) so far, and main templates rendered by liquidjs. */
  stats(): { serversRendered: number; cachedFragments: number; mainTextsRendered: number };
}

/** One rendered server, valid while its render context and www-redirect host are the same. */
interface Fragment {
  ctxKey: string;
  www: string | null;
  text: string;
  /**
   * The SHA-1 of the text and of the files it names (written beside nginx.conf): the checksum
   * hashes these instead of the whole configuration.
   */
  hash: string;
  httpLevel: string;
  uses: readonly HttpFeature[];
  /** What the server asks of the http and stream levels (ModSecurity, tracing, stream-snippets). */
  levels: ServerHttpUses;
  problems: RenderProblem[];
  ingressBytes: ReadonlyMap<IngressRef, number>;
  /** Whether the text reads $request_id or $req_id where lua/request_id.lua's pool would change the value (./request-id.ts). */
  readsRequestId: boolean;
}

interface Templates {
  engine: Liquid;
  main: Template[];
  server: Template[];
  /** server.liquid as text and variable paths, when it holds nothing but `{{ a.b }}` outputs. */
  serverPlain: PlainTemplate | null;
  /** Distinguishes fragments rendered by different template generations. */
  digest: string;
  /** Whether the templates print the checksum as it is (./main-text.ts), so the main text can be kept with a stand-in for it. */
  checksumPrintedOnly: boolean;
}

const SERVERS_TOKEN = '\u0000@@ingress-rx-servers@@\u0000';

function loadTemplates(dir: string): Templates {
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    if (name.endsWith('.liquid')) files[name.slice(0, -'.liquid'.length)] = readFileSync(join(dir, name), 'utf8');
  }
  for (const required of ['nginx.conf', 'server']) {
    if (!(required in files)) throw new Error(`template ${required}.liquid missing in ${dir}`);
  }
  const engine = new Liquid({ templates: files, extname: '', strictFilters: true, strictVariables: true, lenientIf: true, cache: true, greedy: false });
  registerFilters(engine);
  const digest = createHash('sha256');
  for (const [name, text] of Object.entries(files)) {
    // Parse every file now so that a broken partial is reported at reload, not at render.
    engine.parse(text, name);
    digest.update(name).update('\u0000').update(text).update('\u0000');
  }
  return {
    engine, main: engine.parse(files['nginx.conf']!), server: engine.parse(files.server!), serverPlain: plainTemplate(files.server!), digest: digest.digest('hex'),
    checksumPrintedOnly: Object.values(files).every(printsChecksumOnly),
  };
}

/** Alternating literal text and variable paths: texts[0] path[0] texts[1] … texts[n]. */
interface PlainTemplate {
  texts: string[];
  paths: string[][];
}

/**
 * liquidjs costs microseconds per output node and per render call, which at 10k servers is a
 * large part of a full render. A template made only of text and `{{ a.b.c }}` outputs (no tags,
 * filters or whitespace control) is rendered here by concatenation instead; anything else, and
 * any value that is not a string or number, goes through liquidjs.
 */
function plainTemplate(source: string): PlainTemplate | null {
  const texts: string[] = [];
  const paths: string[][] = [];
  const output = /\{\{ *([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*) *\}\}/g;
  let at = 0;
  for (let m = output.exec(source); m; m = output.exec(source)) {
    texts.push(source.slice(at, m.index));
    paths.push(m[1]!.split('.'));
    at = m.index + m[0].length;
  }
  texts.push(source.slice(at));
  return texts.some((t) => t.includes('{{') || t.includes('{%')) ? null : { texts, paths };
}

function renderPlain(t: PlainTemplate, scope: Record<string, unknown>): string | null {
  let out = t.texts[0]!;
  for (let i = 0; i < t.paths.length; i++) {
    let v: unknown = scope;
    for (const key of t.paths[i]!) {
      if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return null;
      v = (v as Record<string, unknown>)[key];
    }
    if (typeof v !== 'string' && !(typeof v === 'number' && Number.isFinite(v))) return null;
    out += v + t.texts[i + 1]!;
  }
  return out;
}

export function createRenderer(opts: { templateDir: string; logger: Logger }): Renderer {
  const { templateDir, logger } = opts;
  let tpl = loadTemplates(templateDir);
  // Model objects are immutable and the model hands back the same object for an unchanged
  // server, so identity keys the fragment cache; an equal new object is simply rendered again.
  let fragments = new WeakMap<Server, Fragment>();
  // The last render's servers and fragments by position: after one change all but one server are
  // the same objects in the same places, and reading an array costs less than a WeakMap look-up.
  let lastServers: readonly Server[] = [];
  let lastFragments: Fragment[] = [];
  let cachedFragments = 0;
  let serversRendered = 0;
  let lastCtxKey = '';
  const mainText = createMainTextCache();
  const httpUsesOf = createHttpUsesMemo();

  function renderChunks(config: Configuration, givenRuntime: NginxRuntime): RenderedChunks {
    const warnings: string[] = [];
    const s = config.settings;
    const runtime = withListenAddresses(s, givenRuntime);
    const passthroughPort = runtime.sslPassthrough && config.servers.some((x) => x.sslPassthrough) ? runtime.sslPassthrough.proxyPort : undefined;
    let ctxKey = `${tpl.digest}\u0000${stringify(s)}\u0000${stringify(runtime)}${passthroughPort === undefined ? '' : `\u0000passthrough`}${config.dynamicRoutes ? '\u0000dynamic-routes' : ''}`;
    // The same string object each time: fragments compare their key by reference, not 4 KB apart.
    if (ctxKey === lastCtxKey) ctxKey = lastCtxKey;
    lastCtxKey = ctxKey;
    const serverCtx: ServerContext = {
      settings: s, runtime, wwwRedirectFrom: null, dynamicRoutes: config.dynamicRoutes, ...(passthroughPort === undefined ? {} : { passthroughPort }),
    };
    const wwwNames = wwwRedirectNames(config.servers);
    const parts: string[] = [''];
    const problems: RenderProblem[] = [];
    // The text is a function of the templates, settings, runtime, server fragments and the
    // http-level extras, so hashing those (not the 40 MB result) identifies it.
    const hashes: string[] = [];
    let httpLevel = '';
    const uses = new Set<HttpFeature>();
    let routerServersRead = false;
    let routerServersReadProxyHost = false;
    let requestIdRead = false;
    const routerParts: number[] = [];
    const charged: Array<ReadonlyMap<IngressRef, number>> = [];
    // What the servers ask of the http and stream levels, one memo look-up per server.
    let modsecurityLoad = false;
    let modsecurityCrs = false;
    let traced = false;
    const snippets: IngressStreamSnippet[] = [];
    const addUses = (use: ServerHttpUses) => {
      modsecurityLoad ||= use.modsecurity.load;
      modsecurityCrs ||= use.modsecurity.crs;
      traced ||= use.traced;
      for (const x of use.streamSnippets) snippets.push(x);
    };
    const servers = config.servers;
    const fragmentsByPosition: Fragment[] = new Array(servers.length);
    for (let i = 0; i < servers.length; i++) {
      const server = servers[i]!;
      // A dynamic host is the router's (./dynamic-routes.ts): no server block.
      if (server.staticBecause === null) {
        addUses(httpUsesOf(server, s));
        continue;
      }
      const www = wwwNames.size === 0 ? null : wwwNames.get(server) ?? null;
      if (server.sslPassthrough && passthroughPort === undefined) warnings.push(passthroughOff(server));
      let frag = lastServers[i] === server ? lastFragments[i] : fragments.get(server);
      if (!frag || frag.ctxKey !== ctxKey || frag.www !== www) {
        serversRendered++;
        // A server block's uses ride in its fragment (the settings are part of ctxKey): no memo entry of their own.
        const levels = usesOf(server, s);
        try {
          const view = serverView(server, www === null ? serverCtx : { ...serverCtx, wwwRedirectFrom: www });
          const scope = { srv: view, s, rt: runtime };
          const text = flatten((tpl.serverPlain && renderPlain(tpl.serverPlain, scope)) ?? tpl.engine.renderSync(tpl.server, scope) as string);
          frag = { ctxKey, www, text, hash: fragmentHash(server, runtime, text), httpLevel: view.httpLevel, uses: view.uses, levels, problems: view.problems, ingressBytes: view.ingressBytes, readsRequestId: readsRequestIdElsewhere(text) };
        } catch (err) {
          // A server the renderer cannot express is left out; the others render.
          const e = unwrap(err);
          const problem: RenderProblem = {
            ingresses: ingressesOf(server), host: server.hostname, field: e instanceof RenderError ? e.field : 'server',
            message: e instanceof RenderError ? e.message.slice(e.field.length + 2) : String((e as Error)?.message ?? e), outcome: 'server left out',
          };
          frag = { ctxKey, www, text: '', hash: '', httpLevel: '', uses: [], levels, problems: [problem], ingressBytes: new Map(), readsRequestId: false };
        }
        fragments.set(server, frag);
      }
      fragmentsByPosition[i] = frag;
      addUses(frag.levels);
      for (const p of frag.problems) problems.push(p);
      if (servesDynamicHosts(server, config.dynamicRoutes)) {
        routerServersRead ||= readsLocationVariables(frag.text);
        routerServersReadProxyHost ||= readsProxyHost(frag.text);
        routerParts.push(parts.length);
      }
      requestIdRead ||= frag.readsRequestId;
      hashes.push(frag.hash);
      parts.push(frag.text);
      httpLevel += frag.httpLevel;
      for (const u of frag.uses) uses.add(u);
      if (frag.ingressBytes.size > 0) charged.push(frag.ingressBytes);
    }
    // Gateway listener ports other than 80 and 443: servers only the router answers in.
    const portServers = listenerPortServers(config, runtime);
    if (portServers !== '') {
      routerParts.push(parts.length);
      requestIdRead ||= readsRequestIdElsewhere(portServers);
      hashes.push(createHash('sha256').update(portServers).digest('hex'));
      parts.push(portServers);
    }
    lastServers = servers;
    lastFragments = fragmentsByPosition;
    cachedFragments = config.servers.length;
    // The router's TLS locations (BackendTLSPolicy): the same in every router server.
    const tlsLocations = config.dynamicRoutes ? config.backendTLSLocations ?? [] : [];
    const tlsText = backendTLSLocationsText(s, runtime, tlsLocations);

    const geoip = geoip2Setup(s, runtime);
    warnings.push(...geoip.warnings);
    const brotli = s.enableBrotli && brotliInstalled(runtime);
    if (s.enableBrotli && !brotli) warnings.push(`enable-brotli is on but ${join(runtime.modulesDir, BROTLI_MODULE)} is not installed (Debian: libnginx-mod-http-brotli-filter): responses are not brotli-compressed`);
    const modsecurity = modsecurityHttp(config, runtime, { load: modsecurityLoad, crs: modsecurityCrs });
    warnings.push(...modsecurity.warnings);
    const otel = opentelemetryHttp(config, traced);
    warnings.push(...otel.warnings);
    const streamSnippetText = streamSnippets(s, snippets, (ingress, message) => {
      const [namespace = '', name = ''] = ingress.split('/');
      problems.push({ ingresses: [{ namespace, name }], host: '', field: 'stream-snippet', message, outcome: 'stream-snippet left out' });
    });
    const hasStream = config.tcpEndpoints.length + config.udpEndpoints.length > 0 || passthroughPort !== undefined || streamSnippetText !== '';
    let stream = hasStream ? streamServers(config.tcpEndpoints, config.udpEndpoints, runtime) : '';
    if (passthroughPort !== undefined) stream += passthroughStream(config.servers, config.backends, runtime, passthroughPort, s, (w) => warnings.push(w));
    const checksum = createHash('sha256').update(ctxKey).update(hashes.join('')).update('\u0000').update(httpLevel).update('\u0000').update(stream).update('\u0000').update(streamSnippetText).update('\u0000').update(geoip.directives).update('\u0000').update(tlsText).digest('hex');
    const metricsLog = runtime.metricsLog ? metricsLogHttp(runtime.metricsLog, config.dynamicRoutes) : '';
    let head: string;
    let tail: string;
    try {
      // Everything nginx.conf.liquid reads besides the checksum, the settings and the runtime (those two are in ctxKey).
      const mainScope = {
        modules: {
          ndk: join(runtime.modulesDir, 'ndk_http_module.so'),
          lua: join(runtime.modulesDir, 'ngx_http_lua_module.so'),
          headers_more: join(runtime.modulesDir, 'ngx_http_headers_more_filter_module.so'),
          stream: join(runtime.modulesDir, 'ngx_stream_module.so'),
          geoip2: join(runtime.modulesDir, 'ngx_http_geoip2_module.so'),
          brotli: join(runtime.modulesDir, BROTLI_MODULE),
          modsecurity: join(runtime.modulesDir, MODSECURITY_MODULE),
        },
        server_names_hash: serverNamesHash(config, s.serverNamesHashMaxSize, s.serverNamesHashBucketSize, wwwNames),
        worker_processes: workerProcesses(runtime.workerProcesses ?? s.workerProcesses, runtime.cpus),
        worker_open_files: workerOpenFiles(s, runtime),
        worker_connections: workerConnections(s, runtime),
        error_log_level: errorLogLevel(runtime.errorLogLevel ?? s.errorLogLevel),
        lua_package_path: `${runtime.luaDir}/?.lua;;`,
        temp: { ...tempPaths(runtime), auth_cache: join(runtime.prefix, 'tmp', 'auth-cache') },
        reload_log: reloadLogPath(runtime),
        left_out_path: leftOutPath(runtime),
        configuration_body_size: `${CONFIGURATION_BODY_BYTES / (1024 * 1024)}m`,
        proxy_headers: httpProxyHeaders(s),
        proxy_next_upstream: nextUpstream(s.retryNonIdempotent && !s.proxyNextUpstream.includes('non_idempotent') ? [...s.proxyNextUpstream, 'non_idempotent'] : s.proxyNextUpstream, 'proxy-next-upstream'),
        log_escape: s.logFormatEscapeJson ? ' escape=json' : s.logFormatEscapeNone ? ' escape=none' : '',
        gzip_types: mimeTypes(s.gzipTypes),
        brotli: brotli ? { types: mimeTypes(s.brotliTypes, 'brotli-types') } : null,
        modsecurity,
        otel,
        ssl_protocols: sslProtocols(s.sslProtocols),
        tls_settings: httpTLSSettings(s, runtime, config.servers.some((sv) => sv.tlsSettings?.authTLS)),
        resolvers: resolvers(runtime),
        lua_resolvers: resolverList(runtime).map((r) => r.lua),
        dns_search: dnsSearch(runtime),
        upstream_addresses: { ownAddresses: [], ...(runtime.upstreamAddresses ?? { allow: [], ownPorts: [] }) },
        listen: runtime.listenAddresses.map(listenAddress),
        block_cidrs: s.blockCidrs,
        block_user_agents: s.blockUserAgents,
        block_referers: s.blockReferers,
        add_headers: Object.entries(s.addHeaders),
        auth_cache: uses.has('auth_cache'),
        tls_upstream: uses.has('tls_upstream') || tlsLocations.length > 0,
        backend_tls_ids: `{${tlsLocations.map((l) => ` ["${l.id}"] = true`).join(',')} }`,
        http_level: httpLevel,
        geoip,
        has_stream: hasStream,
        passthrough: passthroughPort !== undefined,
        https_listen_port: passthroughPort ?? runtime.httpsPort,
        pass_port_source: passPortSource(s),
        stream,
        metrics_log: metricsLog,
        servers: SERVERS_TOKEN,
        location_variables_read: LOCATION_VARIABLES_READ_TOKEN,
        request_id_pool: REQUEST_ID_POOL_TOKEN,
        cm: {
          main: mainDirectives(s),
          events: eventsDirectives(s),
          lua_shared_dicts: luaSharedDicts(s),
          http: httpDirectives(s),
          http_snippet: httpSnippet(s),
          forwarded_for_proxy_protocol: s.useProxyProtocol && s.useForwardedHeaders ? forwardedForProxyProtocol(s) : '',
          logs: configuredLogTargets(s, runtime),
          http_access_log: httpAccessLog(s, runtime),
          stream: hasStream ? streamDirectives(s) : '',
          stream_snippets: streamSnippetText,
        },
      };
      const text = mainText.render(ctxKey, mainScope, checksum, tpl.checksumPrintedOnly, (sum) => tpl.engine.renderSync(tpl.main, { checksum: sum, s, rt: runtime, ...mainScope }) as string);
      const at = text.indexOf(SERVERS_TOKEN);
      if (at < 0 || text.indexOf(SERVERS_TOKEN, at + 1) >= 0) throw new Error('nginx.conf.liquid must print {{ servers }} exactly once');
      head = text.slice(0, at);
      tail = text.slice(at + SERVERS_TOKEN.length);
      // The metrics log's own format is not used where the router serves (the routed one is).
      const read = !config.dynamicRoutes || routerServersRead || readsLocationVariables(head.replace(metricsLog, '')) || readsLocationVariables(tail);
      head = head.replace(LOCATION_VARIABLES_READ_TOKEN, String(read));
      const pool = s.generateRequestId && !requestIdRead && !readsRequestIdElsewhere(tlsText) && !readsRequestIdElsewhere(head) && !readsRequestIdElsewhere(tail);
      head = head.replace(REQUEST_ID_POOL_TOKEN, String(pool));
      const proxyHostRead = routerServersReadProxyHost || readsProxyHost(head) || readsProxyHost(tail);
      for (const i of routerParts) parts[i] = withRouterProxyHost(withBackendTLS(parts[i]!, tlsText), proxyHostRead);
    } catch (err) {
      throw prefixError(unwrap(err), 'nginx.conf');
    }
    parts[0] = head;
    parts.push(tail);
    return { chunks: parts, checksum, warnings, problems, httpLevel, writesReloadLog: head.includes(`error_log ${quoteLiteral(reloadLogPath(runtime))} notice;`), ingressBytes: () => sumByIngress(charged) };
  }

  function renderWithWarnings(config: Configuration, runtime: NginxRuntime): RenderResult {
    const { chunks, checksum, warnings, problems } = renderChunks(config, runtime);
    // Concatenation, not join: V8 keeps the result as a rope over the cached fragments, so no
    // second copy of a 20+ MB text exists until a caller reads it as a whole (it is flattened
    // then, once). The reload actor writes the chunks and never needs the text.
    let text = '';
    for (const c of chunks) text += c;
    return { text, checksum, warnings, problems };
  }

  return {
    render: (config, runtime) => renderWithWarnings(config, runtime).text,
    renderWithWarnings,
    renderChunks,
    stats: () => ({ serversRendered, cachedFragments, mainTextsRendered: mainText.rendered() }),
    reloadTemplates() {
      try {
        const loaded = loadTemplates(templateDir);
        if (loaded.digest !== tpl.digest) {
          fragments = new WeakMap();
          lastServers = [];
          lastFragments = [];
        }
        tpl = loaded;
        return { ok: true };
      } catch (err) {
        const error = (err as Error).message;
        logger.error({ err: error, templateDir }, 'invalid NGINX template; keeping the previous one');
        return { ok: false, error };
      }
    },
  };
}

/** The Ingresses whose paths a server serves. */
function sumByIngress(charged: ReadonlyArray<ReadonlyMap<IngressRef, number>>): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of charged) {
    for (const [ref, n] of m) {
      const k = `${ref.namespace}/${ref.name}`;
      out.set(k, (out.get(k) ?? 0) + n);
    }
  }
  return out;
}

export function ingressesOf(server: Server): IngressRef[] {
  const seen = new Map<string, IngressRef>();
  for (const loc of server.locations) if (loc.ingress) seen.set(`${loc.ingress.namespace}/${loc.ingress.name}`, loc.ingress);
  return [...seen.values()];
}

/** The blocks that write files beside nginx.conf. */
const FILE_BLOCKS = RENDER_BLOCKS.filter((b) => b.files !== undefined);
const SERVER_FILE_BLOCKS = RENDER_BLOCKS.filter((b) => b.serverFiles !== undefined);

/** What `files` gives for each of `blocks`, one list (no allocation when none gives any). */
function blockFiles(blocks: readonly RenderBlock[], files: (b: RenderBlock) => readonly AuxiliaryFile[]): AuxiliaryFile[] {
  let out: AuxiliaryFile[] | null = null;
  for (const b of blocks) {
    const f = files(b);
    if (f.length > 0) (out ??= []).push(...f);
  }
  return out ?? [];
}

/** The files a server block itself needs written beside nginx.conf (e.g. a client CA bundle). */
const serverFilesOf = (server: Server, runtime: NginxRuntime) => blockFiles(SERVER_FILE_BLOCKS, (b) => b.serverFiles!(server, runtime));

/** The files a location needs written beside nginx.conf (e.g. htpasswd), from every block. */
const filesOf = (loc: Location, runtime: NginxRuntime) => blockFiles(FILE_BLOCKS, (b) => b.files!(loc, runtime));

/**
 * A rendered server's text and the files it names (written beside nginx.conf) identify it.
 * The blocks are called in loops of their own: serverFilesOf and filesOf make a closure and a
 * list per call, 23,500 of each at 10k, most of the hash's cost in a process's first render.
 */
function fragmentHash(server: Server, runtime: NginxRuntime, text: string): string {
  let files = '';
  for (const b of SERVER_FILE_BLOCKS) {
    for (const file of b.serverFiles!(server, runtime)) files += `\u0000${file.path}\u0000${file.content}`;
  }
  for (const loc of server.locations) files += locationFilesText(loc, runtime);
  return hash('sha1', files === '' ? text : text + files, 'base64');
}

/** filesOf as fragmentHash hashes it; a file its block refuses changes no checksum (auxiliaryFiles reports it). */
function locationFilesText(loc: Location, runtime: NginxRuntime): string {
  let out = '';
  try {
    for (const b of FILE_BLOCKS) {
      for (const file of b.files!(loc, runtime)) out += `\u0000${file.path}\u0000${file.content}`;
    }
  } catch {
    return '';
  }
  return out;
}

/**
 * liquidjs builds its output by concatenation, which V8 keeps as a rope; joining 10k ropes is
 * several times slower than joining flat strings. Number() flattens a rope in place.
 */
function flatten(s: string): string {
  Number(s);
  return s;
}

/** liquidjs wraps filter errors in RenderError of its own; give back ours. */
function unwrap(err: unknown): unknown {
  let e = err as { originalError?: unknown; cause?: unknown };
  for (let i = 0; i < 5 && e && !(e instanceof RenderError); i++) {
    const inner = e.originalError ?? e.cause;
    if (!inner) break;
    e = inner as typeof e;
  }
  return e instanceof RenderError ? e : err;
}

/** `auto` is the runtime's CPU count (a container's CPU limit counts), as ingress-nginx writes it. */
function workerProcesses(v: string, cpus: number): string {
  if (v === 'auto') return String(cpus);
  if (/^[1-9]\d{0,3}$/.test(v)) return v;
  throw new RenderError('worker-processes', `not a number or auto: ${JSON.stringify(v)}`);
}

/**
 * worker_rlimit_nofile: max-worker-open-files, or for 0 what ingress-nginx computes: the hard
 * open-files limit NGINX inherits less 1024, at least 1024.
 */
function workerOpenFiles(s: Configuration['settings'], runtime: NginxRuntime): number {
  return s.maxWorkerOpenFiles > 0 ? s.maxWorkerOpenFiles : Math.max(1024, runtime.openFilesLimit - 1024);
}

/** max-worker-connections, or for 0 what ingress-nginx computes: 3/4 of worker_rlimit_nofile. */
function workerConnections(s: Configuration['settings'], runtime: NginxRuntime): number {
  if (s.workerConnections > 0) return s.workerConnections;
  return Math.floor((workerOpenFiles(s, runtime) * 3) / 4);
}

const LOG_LEVELS = new Set(['debug', 'info', 'notice', 'warn', 'error', 'crit', 'alert', 'emerg']);
function errorLogLevel(v: string): string {
  if (LOG_LEVELS.has(v)) return v;
  throw new RenderError('error-log-level', `unknown level ${JSON.stringify(v)}`);
}

function sslProtocols(list: string[]): string {
  if (list.length === 0) throw new RenderError('ssl-protocols', 'empty');
  for (const p of list) if (!/^(TLSv1(\.[0-3])?|SSLv[23])$/.test(p)) throw new RenderError('ssl-protocols', `unknown protocol ${JSON.stringify(p.slice(0, 30))}`);
  return list.join(' ');
}

function mimeTypes(list: readonly string[], field = 'gzip-types'): string {
  for (const t of list) if (!/^[A-Za-z0-9.+*-]+\/[A-Za-z0-9.+*-]+$/.test(t)) throw new RenderError(field, `not a MIME type: ${JSON.stringify(t.slice(0, 50))}`);
  return list.length ? list.join(' ') : 'text/html';
}

/** Resolver addresses as NGINX's `resolver` reads them (IPv6 bracketed, an optional port). */
export function resolvers(runtime: NginxRuntime, resolvConf = runtime.resolvConf ?? '/etc/resolv.conf'): string {
  return resolverList(runtime, resolvConf).map((r) => r.nginx).join(' ');
}

/** What a resolv.conf says: nameservers (an ingress-rx extension: `IP:PORT`), search domains, ndots. */
interface ResolvConf { nameservers: string[]; search: string[]; ndots: number }

const DNS_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/i;

function readResolvConf(path: string): ResolvConf {
  const conf: ResolvConf = { nameservers: [], search: [], ndots: 1 };
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return conf; // no resolv.conf: loopback below, no search
  }
  for (const line of text.split('\n')) {
    const [keyword, ...values] = line.trim().split(/\s+/);
    if (keyword === 'nameserver' && values[0]) conf.nameservers.push(values[0].replace(/%.*$/, ''));
    // As the C library reads them: the last search (or domain) line wins, ndots at most 15.
    else if (keyword === 'search' || keyword === 'domain') conf.search = values.map((d) => d.replace(/\.$/, '')).filter((d) => DNS_NAME.test(d) && d.length <= 253);
    else if (keyword === 'options') {
      for (const o of values) {
        const m = /^ndots:(\d+)$/.exec(o);
        if (m) conf.ndots = Math.min(15, Number(m[1]));
      }
    }
  }
  return conf;
}

/**
 * The search domains and ndots lua/dns.lua applies to a name without a trailing dot (a
 * Service's short name as an ExternalName), as ingress-nginx's resolver does: from the
 * resolv.conf the nameservers come from, none when the runtime names its resolvers.
 */
export function dnsSearch(runtime: NginxRuntime, resolvConf = runtime.resolvConf ?? '/etc/resolv.conf'): { search: string[]; ndots: number } {
  if (runtime.resolvers && runtime.resolvers.length > 0) return { search: [], ndots: 1 };
  const { search, ndots } = readResolvConf(resolvConf);
  return { search, ndots };
}

/**
 * The runtime's resolvers, or the nameservers of /etc/resolv.conf: for NGINX and, with the port
 * spelled out, for lua/dns.lua, so that a name Lua dials (an auth-url, a mirror-target) is
 * resolved by the nameservers NGINX itself asks.
 */
export function resolverList(runtime: NginxRuntime, resolvConf = runtime.resolvConf ?? '/etc/resolv.conf'): Array<{ nginx: string; lua: string }> {
  let list = runtime.resolvers;
  if (!list || list.length === 0) {
    list = readResolvConf(resolvConf).nameservers;
    if (list.length === 0) list = ['127.0.0.1'];
  }
  return list.map((a) => {
    const withPort = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(a);
    const bare = withPort ? (withPort[1] ?? withPort[2])! : a.replace(/^\[|\]$/g, '');
    cidr(bare, 'resolver');
    const port = withPort ? Number(withPort[3]) : 53;
    if (port < 1 || port > 65535) throw new RenderError('resolver', `port out of range: ${a.slice(0, 60)}`);
    const host = bare.includes(':') ? `[${bare}]` : bare;
    return { nginx: withPort ? `${host}:${port}` : host, lua: `${host}:${port}` };
  });
}

/** Files the configuration refers to that the reload actor writes before testing it (each block's `files`). */
const BROTLI_MODULE = 'ngx_http_brotli_filter_module.so';
/** enable-brotli loads the filter module only (ingress-nginx also loads brotli_static, which it never turns on). */
const brotliInstalled = (rt: NginxRuntime): boolean => existsSync(join(rt.modulesDir, BROTLI_MODULE));

export function auxiliaryFiles(config: Configuration, runtime: NginxRuntime): AuxiliaryFile[] {
  const out = new Map<string, AuxiliaryFile>();
  for (const file of tlsSettingsFiles(config.settings, runtime)) out.set(file.path, file);
  for (const file of modsecurityFiles(modsecurityHttp(config, runtime), runtime)) out.set(file.path, file);
  for (const server of config.servers) {
    for (const file of serverFilesOf(server, runtime)) out.set(file.path, file);
    for (const loc of server.locations) for (const file of filesOf(loc, runtime)) out.set(file.path, file);
  }
  if (config.dynamicRoutes) for (const file of backendTLSFiles(runtime, config.backendTLSLocations ?? [])) out.set(file.path, file);
  return [...out.values()];
}

const nextPowerOf2 = (n: number): number => 2 ** Math.ceil(Math.log2(Math.max(1, n)));
const align8 = (n: number): number => Math.ceil(n / 8) * 8;

/**
 * The server_names_hash_bucket_size NGINX needs for a name of `length` bytes (ngx_hash_init on
 * 64-bit): a bucket holds the element (a pointer, then the name and 2 bytes rounded up to a
 * pointer) and the pointer that ends the bucket.
 */
export function serverNameBucketBytes(length: number): number {
  return 8 + align8(length + 2) + 8;
}

/**
 * server_names_hash sizes large enough for every server name (aliases and www-redirect twins
 * included), at least the ConfigMap's: a power of two (as ingress-nginx rounds it) that fits the
 * longest name as NGINX lays out its hash, and a max size of at least the number of names, which
 * with 10,000 hosts keeps NGINX from warning that it gave up on an optimal hash.
 */
export function serverNamesHash(
  config: Configuration, maxSize: number, bucketSize: number, wwwNames = wwwRedirectNames(config.servers),
): { max_size: number; bucket_size: number } {
  let count = 0;
  let longest = 0;
  const count1 = (name: string) => {
    count++;
    // A UTF-16 code unit is at most 3 bytes of UTF-8: a name that short cannot be the longest.
    if (name.length * 3 > longest) longest = Math.max(longest, Buffer.byteLength(name));
  };
  for (const server of config.servers) {
    count1(server.hostname);
    for (const alias of server.aliases) count1(alias);
  }
  for (const twin of wwwNames.values()) count1(twin);
  return { max_size: Math.max(maxSize, nextPowerOf2(count)), bucket_size: Math.max(bucketSize, nextPowerOf2(serverNameBucketBytes(longest))) };
}

/** The runtime with the listen addresses bind-address and disable-ipv6 leave (the same object when they change nothing). */
function withListenAddresses(s: NginxSettings, runtime: NginxRuntime): NginxRuntime {
  const listen = listenAddresses(s, runtime);
  return listen.join(' ') === runtime.listenAddresses.join(' ') ? runtime : { ...runtime, listenAddresses: listen };
}
