// The location frame: one `location` block, laid out from the render blocks' slots in the fixed
// order of LOCATION_LAYOUT around what every proxied location has: the variables that name it,
// the Lua rewrite phase (the Lua wiring contract), the standard proxy headers and the pass.
// liquidjs costs microseconds per output node, so a location is laid out here as a dense
// string; every value in it went through a filter.
import { createHash } from 'node:crypto';
import type { NginxSettings } from '../model/core/config/settings.js';
import type { Location, LocationSettings, Server } from '../model/core/types.js';
import { locationLabel } from '../model/core/origin.js';
import * as f from './filters.js';
import { LOCATION_LAYOUT, slotFunctions } from './blocks/index.js';
import { I, NONE, directives } from './blocks/layout.js';
import type { HeaderPart, HttpFeature, LocationBlock, LocationContext, LuaPart, Shared, Upstream } from './blocks/types.js';
import { headerVariables, standardHeaders } from './proxy-headers.js';
import type { NginxRuntime } from './runtime.js';

function shortId(...parts: string[]): string {
  return createHash('sha1').update(parts.join('\u0000')).digest('hex').slice(0, 12);
}

/** A rendered location and what it needs outside its block. */
export interface RenderedLocation {
  text: string;
  internal: readonly Shared[];
  http: readonly Shared[];
  uses: readonly HttpFeature[];
}

/** What is the same for every location of a server. */
export interface LocationFrame {
  settings: NginxSettings;
  runtime: NginxRuntime;
  /** The request's $host as a Lua literal when the server has one exact name, else '' (see knownHost). */
  host: string;
  /** What the server's previous location printed, for the next one to reuse (see repeatedPieces). */
  repeated: RepeatedPieces;
}

/**
 * The parts of a location's text that the next location of the same server mostly repeats: a
 * server's locations come from one Ingress, Service and backend as a rule, and printing them again
 * is most of a location's cost in a full render (each piece a new string the collector copies).
 * Each piece is kept with the values it was printed from and reused only when they are equal.
 */
export interface RepeatedPieces {
  ingress: Location['ingress'] | undefined;
  serviceName: unknown;
  servicePort: unknown;
  /** The $namespace, $ingress_name, $service_name and $service_port lines. */
  names: string;
  backend: string | undefined;
  /** $proxy_upstream_name and the two lines after it. */
  upstreamName: string;
  /** The upstream name lines the Lua piece was printed after. */
  luaUpstreamName: string;
  redirect: string;
  luaFirst: string;
  luaRedirect: readonly string[] | undefined;
  luaFallback: string | undefined;
  luaFromSnippet: boolean;
  /** From $proxy_upstream_name to the end of the Lua rewrite phase (the redirect slot between). */
  backendLines: string;
}

export function repeatedPieces(): RepeatedPieces {
  return {
    ingress: undefined, serviceName: undefined, servicePort: undefined, names: '',
    backend: undefined, upstreamName: '', luaUpstreamName: '', redirect: '', luaFirst: '', luaRedirect: undefined, luaFallback: undefined, luaFromSnippet: false, backendLines: '',
  };
}

const slots = <S extends keyof LocationBlock>(slot: S) => slotFunctions<LocationBlock, S>(LOCATION_LAYOUT, 'location', slot);
const DENY = slots('deny');
const UPSTREAM = slots('upstream');
const REDIRECT = slots('redirect');
const LUA = slots('lua');
const ACCESS = slots('access');
const CORS = slots('cors');
const ERRORS = slots('errors');
const HEADERS = slots('headers');
const PROXY = slots('proxy');
const SNIPPET = slots('snippet');
const INTERNAL = slots('internal');
const HTTP = slots('http');
const USES = slots('uses');

const HTTP_UPSTREAM: Upstream = { pass: 'proxy_pass http://upstream_balancer', hdr: 'proxy_set_header' };

class Context implements LocationContext {
  private shortId: string | undefined;
  constructor(
    readonly server: Server, readonly loc: Location, readonly settings: NginxSettings, readonly runtime: NginxRuntime, readonly hdr: string,
  ) {}

  // The two pieces of a Prefix split share one (one rate-limit counter, one auth location).
  id(): string {
    const loc = this.loc;
    return (this.shortId ??= shortId(this.server.hostname, loc.ingressPath ?? loc.path, loc.ingressPath !== undefined ? 'Prefix' : loc.pathType));
  }
}

function text(fns: ReadonlyArray<(c: LocationContext) => string>, c: LocationContext): string {
  let out = '';
  for (const fn of fns) out += fn(c);
  return out;
}

/**
 * The text slots whose text may follow from the location's settings alone, in their order in the
 * block; locations holding one settings object (most of a cluster's) print the same text there.
 */
const SETTINGS_SLOTS = [ACCESS, CORS, ERRORS, PROXY, SNIPPET] as const;

/**
 * A slot under one settings object, in its blocks' order: the text of each run of blocks that
 * read the settings alone, and each block that reads more (run per location).
 */
type SlotPlan = ReadonlyArray<string | ((c: LocationContext) => string)>;
/** The rewrite phase's parts under one settings object, in the blocks' order: each block's part, or the block when it reads more. */
type LuaPlan = ReadonlyArray<LuaPart | null | ((c: LocationContext) => LuaPart | null)>;

interface SlotTexts {
  /** One plan per SETTINGS_SLOTS entry. */
  readonly slots: readonly SlotPlan[];
  readonly lua: LuaPlan;
}

/** Thrown by the probe context when a block reads anything but the settings: that block is printed per location. */
const PER_LOCATION = new Error('reads per-location fields');

/**
 * Each settings slot's plan under `settings`, found by running each block once with a context
 * that holds nothing of the location but its settings (reading the path, backend, Ingress,
 * server or id throws PER_LOCATION). A block that reads them only under some settings is caught
 * by the run for those settings. A RenderError leaves the block per location (it then denies
 * each location as before).
 */
function settingsSlotTexts(settings: LocationSettings, frame: LocationFrame, hdr: string): SlotTexts {
  const loc = new Proxy({ settings } as Location, {
    get: (target, key) => { if (key === 'settings') return target.settings; throw PER_LOCATION; },
  });
  const probe: LocationContext = {
    get server(): Server { throw PER_LOCATION; },
    loc, settings: frame.settings, runtime: frame.runtime, hdr,
    id: () => { throw PER_LOCATION; },
  };
  const lua = LUA.map((fn) => {
    try {
      return fn(probe);
    } catch {
      return fn;
    }
  });
  const slots = SETTINGS_SLOTS.map((fns) => {
    const plan: Array<string | ((c: LocationContext) => string)> = [];
    let run = '';
    for (const fn of fns) {
      let own: string | null;
      try {
        own = fn(probe);
      } catch {
        own = null;
      }
      if (own !== null) {
        run += own;
        continue;
      }
      if (run !== '') plan.push(flat(run));
      run = '';
      plan.push(fn);
    }
    if (run !== '' || plan.length === 0) plan.push(flat(run));
    return plan;
  });
  return { slots, lua };
}

/** A string in one piece (V8 keeps concatenations as trees): a location's text then holds it as one leaf. */
function flat(s: string): string {
  Number(s);
  return s;
}

// Per ConfigMap settings and runtime (one pair per render), then per location settings object and
// upstream header directive: the slots' texts.
const slotTexts = new WeakMap<NginxSettings, WeakMap<NginxRuntime, WeakMap<LocationSettings, Map<string, SlotTexts>>>>();

function cachedSlotTexts(loc: Location, frame: LocationFrame, hdr: string): SlotTexts {
  let byRuntime = slotTexts.get(frame.settings);
  if (byRuntime === undefined) slotTexts.set(frame.settings, (byRuntime = new WeakMap()));
  let bySettings = byRuntime.get(frame.runtime);
  if (bySettings === undefined) byRuntime.set(frame.runtime, (bySettings = new WeakMap()));
  let byHdr = bySettings.get(loc.settings);
  if (byHdr === undefined) bySettings.set(loc.settings, (byHdr = new Map()));
  let texts = byHdr.get(hdr);
  if (texts === undefined) byHdr.set(hdr, (texts = settingsSlotTexts(loc.settings, frame, hdr)));
  return texts;
}

function slotText(texts: SlotTexts, i: number, c: LocationContext): string {
  const plan = texts.slots[i]!;
  const first = plan[0]!;
  if (plan.length === 1 && typeof first === 'string') return first;
  let out = '';
  for (const part of plan) out += typeof part === 'string' ? part : part(c);
  return out;
}

function shared(fns: ReadonlyArray<(c: LocationContext) => readonly Shared[]>, c: LocationContext): readonly Shared[] {
  let out: Shared[] | null = null;
  for (const fn of fns) {
    const part = fn(c);
    if (part.length > 0) (out ??= []).push(...part);
  }
  return out ?? NONE;
}

/** The location block. A RenderError from a block propagates: the caller denies the location. */
export function renderLocation(server: Server, loc: Location, matcher: string, frame: LocationFrame): RenderedLocation {
  let upstream = HTTP_UPSTREAM;
  for (const fn of UPSTREAM) upstream = fn(loc, server, frame.settings) ?? upstream;
  const c = new Context(server, loc, frame.settings, frame.runtime, upstream.hdr);
  let reason = loc.denied;
  for (let i = 0; reason === null && i < DENY.length; i++) reason = DENY[i]!(c);
  if (reason !== null) return { text: deniedText(matcher, f.comment(reason), loc.denied !== null ? loc.deniedStatus : undefined), internal: NONE, http: NONE, uses: NONE };

  const http = shared(HTTP, c);
  const internal = shared(INTERNAL, c);
  let uses: HttpFeature[] | null = null;
  for (const fn of USES) {
    const u = fn(c);
    if (u.length > 0) (uses ??= []).push(...u);
  }
  const texts = cachedSlotTexts(loc, frame, upstream.hdr);
  // In the order the lines print, so that of two values refused the first is the one reported.
  const naming = namingLines(loc, frame.repeated) + pathLine(loc);
  const upstreamName = upstreamNameLines(loc.backend, frame.repeated);
  const body = naming + backendLines(c, upstreamName, text(REDIRECT, c), texts.lua, frame) + slotText(texts, 0, c) + slotText(texts, 1, c) + slotText(texts, 2, c)
    + headers(c) + slotText(texts, 3, c) + slotText(texts, 4, c);
  return { text: `        location ${matcher} {\n${body}${I}${upstream.pass};\n        }\n`, internal, http, uses: uses ?? NONE };
}

/** A location that answers 503 (or `status`), saying why in a comment (already through the comment filter). */
export function deniedText(matcher: string, reason: string, status: number = 503): string {
  return `        location ${matcher} {\n${I}# denied: ${reason}\n${I}return ${status};\n        }\n`;
}

function namingLines(loc: Location, last: RepeatedPieces): string {
  const ingress = loc.ingress;
  const serviceName = loc.service?.name ?? '';
  const servicePort = loc.service?.port ?? '';
  if (last.ingress !== ingress || last.serviceName !== serviceName || last.servicePort !== servicePort) {
    last.names = `${I}set $namespace ${f.quote(ingress?.namespace ?? '', 'namespace')};\n`
      + `${I}set $ingress_name ${f.quote(ingress ? locationLabel(ingress) : '', 'ingress name')};\n`
      + `${I}set $service_name ${f.quote(serviceName, 'service name')};\n`
      + `${I}set $service_port ${f.quote(servicePort, 'service port')};\n`;
    last.ingress = ingress;
    last.serviceName = serviceName;
    last.servicePort = servicePort;
  }
  return last.names;
}

// The request metrics' path label: the Ingress rule's path, empty for the built-in default backend (as ingress-nginx).
const pathLine = (loc: Location) => `${I}set $location_path ${f.quote(loc.ingress ? loc.ingressPath ?? loc.path : '', 'path')};\n`;

function upstreamNameLines(backend: string, last: RepeatedPieces): string {
  if (last.backend !== backend) {
    last.upstreamName = `${I}set $proxy_upstream_name ${f.quote(backend, 'backend')};\n`
      // As ingress-nginx: $proxy_host names the upstream, not the balancer every location passes to.
      + `${I}set $proxy_host $proxy_upstream_name;\n`
      + `${I}set $proxy_alternative_upstream_name "";\n`;
    last.backend = backend;
  }
  return last.upstreamName;
}

/**
 * The upstream name lines (upstreamNameLines), the redirect slot's text, then the rewrite phase,
 * run for every proxied request, so it carries what the model knows as constants (and first
 * brings the worker up to what was posted, lua/freshness.lua): the SSL redirect only where the
 * location has one and the server's host, and the backend name unless a configuration-snippet
 * could `set` another $proxy_upstream_name. header_filter_by_lua is set once per server and
 * inherited by every location that defines none.
 */
function backendLines(c: LocationContext, upstreamName: string, redirectText: string, lua: LuaPlan, frame: LocationFrame): string {
  let first = '';
  let redirectFlags: readonly string[] | undefined;
  let fallback: string | undefined;
  let fromSnippet = false;
  for (const planned of lua) {
    const part = typeof planned === 'function' ? planned(c) : planned;
    if (part === null) continue;
    if (part.first) first += `${I}    ${part.first}\n`;
    redirectFlags = part.redirect ?? redirectFlags;
    fallback = part.fallbackBackend ?? fallback;
    fromSnippet ||= part.backendFromSnippet === true;
  }
  const last = frame.repeated;
  if (last.luaUpstreamName === upstreamName && last.redirect === redirectText && last.luaFirst === first && sameWords(last.luaRedirect, redirectFlags)
    && last.luaFallback === fallback && last.luaFromSnippet === fromSnippet) return last.backendLines;
  const host = frame.host;
  const redirect = redirectFlags ? `${I}    lua_ingress.rewrite(${f.luaString(redirectFlags.join(' '))}${host ? `, ${host}` : ''})\n` : '';
  let args = fromSnippet ? 'nil' : f.luaString(c.loc.backend, 'backend');
  // default-backend: where the request goes while the backend has no endpoint (decided per request).
  if (fallback) args += `, ${fallback}`;
  else if (args === 'nil') args = '';
  last.backendLines = upstreamName + redirectText
    + `${I}rewrite_by_lua_block {\n${first}${I}    freshness.catch_up()\n${redirect}${I}    balancer.rewrite(${args})\n${I}}\n`;
  last.luaUpstreamName = upstreamName;
  last.redirect = redirectText;
  last.luaFirst = first;
  last.luaRedirect = redirectFlags;
  last.luaFallback = fallback;
  last.luaFromSnippet = fromSnippet;
  return last.backendLines;
}

function sameWords(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The location's own headers and then the whole standard set, when any block sets headers. */
function headers(c: LocationContext): string {
  let own = false;
  let setup = '';
  let lines: readonly string[] = NONE;
  let host: string | undefined;
  let connection = '$connection_upgrade';
  for (const fn of HEADERS) {
    const part: HeaderPart | null = fn(c);
    if (part === null) continue;
    own = true;
    if (part.setup) setup += part.setup;
    if (part.lines) lines = lines.concat(part.lines);
    host = part.host ?? host;
    connection = part.connection ?? connection;
  }
  // Most locations set no header of their own: nothing is made for them.
  return own ? `\n${setup}${directives(lines)}${directives(standardHeaders(c.settings, c.hdr, host ?? headerVariables(c.settings).host, connection))}` : '';
}
