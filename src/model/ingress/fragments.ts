// One Ingress + its parsed annotations → its contribution to the model: the hosts it names, one
// Location per valid path (built once and reused while the Ingress is unchanged), the backends
// it uses, and its root placeholder. Nothing here looks at other Ingresses.
import type { Ingress, IngressBackend, IngressTLS, PathType } from '../../store/kube-types.js';
import {
  defaultAnnotations, locationSettingsAt, locationTemplate, type LocationTemplate, type ParsedAnnotations,
} from './annotations/index.js';
import type { NginxSettings } from '../core/config/settings.js';
import type { IngressRef, Location, ModelWarning } from '../core/types.js';
import { DEEP_INSPECTION_WARNING, DEFAULT_SERVER, ROOT_PATH, deepInspectionMatch, hostProblem, pathProblem } from '../core/paths.js';
import { ingressStaticReason } from './dynamic-routes.js';
import { DEFAULT_UPSTREAM } from '../core/backend-parts.js';
import { exactArray } from '../core/exact-array.js';
import { withLocationSettings } from '../core/location-settings.js';

export { DEFAULT_UPSTREAM };

/** A Service backend an Ingress refers to. */
export interface BackendUse {
  /** Upstream name `<namespace>-<service>-<port>`. */
  name: string;
  namespace: string;
  service: string;
  /** `namespace/service`. */
  serviceKey: string;
  /** Port number or name, as a string. */
  port: string;
}

export interface PathEntry {
  /** Server name (`_` for a rule without host). */
  host: string;
  location: Location;
  use: BackendUse;
}

export interface IngressFragment {
  key: string;
  ref: IngressRef;
  parsed: ParsedAnnotations;
  canary: boolean;
  /** Distinct server names of its rules, in rule order. */
  hosts: string[];
  paths: PathEntry[];
  defaultBackend: BackendUse | null;
  /** spec.defaultBackend and no rules: takes over the default server's root. */
  catchAll: boolean;
  tls: IngressTLS[];
  /** The `/` location this Ingress gives a host it creates (its defaultBackend or the default upstream); made when first read. */
  readonly rootLocation: Location;
  /** The default server's root when this Ingress is the catch-all. */
  catchAllLocation: Location | null;
  /** Why its routes need a server block, or null when the Lua router can serve them (./dynamic-routes.ts). */
  staticReason: string | null;
  warnings: ModelWarning[];
}

export function upstreamName(namespace: string, service: string, port: string): string {
  return `${namespace}-${service}-${port}`;
}

/** Whether two backends name the same Service port, spelled the same way (a number, or a name). */
function sameServicePort(a: IngressBackend, b: IngressBackend): boolean {
  return !!a.service && !!b.service && a.service.name === b.service.name
    && a.service.port?.number === b.service.port?.number && a.service.port?.name === b.service.port?.name;
}

function backendUse(namespace: string, b: IngressBackend): BackendUse | string {
  if (!b.service) {
    return b.resource ? `resource backend ${b.resource.kind}/${b.resource.name} is not supported` : 'backend names no service';
  }
  const port = b.service.port?.number !== undefined ? String(b.service.port.number) : b.service.port?.name ?? '';
  if (!b.service.name || port === '') return 'service backend needs a name and a port number or name';
  // What the API server allows (a DNS-1035 label; an IANA service name of at most 15 characters):
  // anything else would reach nginx.conf and Lua as part of names.
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(b.service.name)) return `service name ${JSON.stringify(b.service.name.slice(0, 80))} is not a DNS label`;
  if (b.service.port?.number === undefined && !/^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$/.test(port)) return `port name ${JSON.stringify(port.slice(0, 80))} is not an IANA service name (at most 15 lower-case letters, digits and "-")`;
  if (b.service.port?.number !== undefined && !(Number.isInteger(b.service.port.number) && b.service.port.number >= 1 && b.service.port.number <= 65535)) return `port ${JSON.stringify(b.service.port.number)} is not a port number`;
  const name = upstreamName(namespace, b.service.name, port);
  // Namespace `upstream`, Service `default`, port `backend`: two backends of one name would
  // reach Lua, which keeps one of them.
  if (name === DEFAULT_UPSTREAM) return `upstream name ${name} is the default backend's`;
  return { name, namespace, service: b.service.name, serviceKey: `${namespace}/${b.service.name}`, port };
}

/**
 * A Location holding the Ingress's shared location settings (each location its own Ingress's),
 * adjusted for this path where a group says so.
 */
export function makeLocation(
  path: string, pathType: PathType, ref: IngressRef | null, use: BackendUse | null, backend: string,
  template: LocationTemplate, settings: NginxSettings, isDefBackend: boolean,
): Location {
  // One literal, its keys always in this order: every location shares V8's layout of it (the
  // Prefix split's copies set `ingressPath`, present here for the same reason).
  return {
    path, pathType, isDefBackend, ingress: ref, service: use ? { name: use.service, port: use.port } : null, backend,
    denied: template.denied, settings: locationSettingsAt(template.settings, { path, settings }), ingressPath: undefined,
  };
}

const staticReasons = new WeakMap<ParsedAnnotations, { settings: NginxSettings; reason: string | null }>();

function templateOf(parsed: ParsedAnnotations, settings: NginxSettings): LocationTemplate {
  return locationTemplate(parsed, defaultAnnotations(settings));
}

function staticReasonOf(parsed: ParsedAnnotations, settings: NginxSettings): string | null {
  let r = staticReasons.get(parsed);
  if (r?.settings !== settings) staticReasons.set(parsed, (r = { settings, reason: ingressStaticReason(parsed, settings) }));
  return r.reason;
}

/**
 * A fragment whose root location is made when first read: a host's root placeholder is its
 * oldest Ingress's, and only when no Ingress of the host has a `/` path (most have one).
 */
class Fragment implements IngressFragment {
  readonly canary: boolean;
  #root: Location | null = null;

  constructor(
    readonly key: string, readonly ref: IngressRef, readonly parsed: ParsedAnnotations, readonly hosts: string[], readonly paths: PathEntry[],
    readonly defaultBackend: BackendUse | null, readonly catchAll: boolean, readonly tls: IngressTLS[], readonly catchAllLocation: Location | null,
    readonly staticReason: string | null, readonly warnings: ModelWarning[],
    private readonly root: { backend: string; template: LocationTemplate; settings: NginxSettings },
  ) {
    this.canary = parsed.canary.enabled;
  }

  get rootLocation(): Location {
    return (this.#root ??= makeLocation(ROOT_PATH, 'Prefix', this.ref, this.defaultBackend, this.root.backend, this.root.template, this.root.settings, true));
  }
}

/** Past this many hosts an Ingress's host names are de-duplicated with a Set. */
const MANY_HOSTS = 16;

/** One warning about Ingress `key` (a function, not a closure per Ingress: a full build makes 10k fragments). */
function warnAbout(warnings: ModelWarning[], key: string, field: string, message: string): void {
  warnings.push({ object: `Ingress ${key}`, field, message });
}

export function buildFragment(
  ing: Ingress, parsed: ParsedAnnotations, settings: NginxSettings, annotationWarnings: ModelWarning[],
): IngressFragment {
  const ns = ing.metadata.namespace ?? '';
  const key = `${ns}/${ing.metadata.name}`;
  const ref: IngressRef = { namespace: ns, name: ing.metadata.name };
  const warnings = annotationWarnings.slice();

  let defaultBackend: BackendUse | null = null;
  if (ing.spec.defaultBackend) {
    const u = backendUse(ns, ing.spec.defaultBackend);
    if (typeof u === 'string') warnAbout(warnings, key, 'spec.defaultBackend', `${u}; ignored`);
    else defaultBackend = u;
  }

  const hosts: string[] = [];
  // Searched in place while short; a Set once an Ingress names many hosts.
  let named: Set<string> | null = null;
  const paths: PathEntry[] = [];
  // The last path's backend and use: the next path naming the same Service port shares the use.
  let lastBackend: IngressBackend | null = null;
  let lastUse: BackendUse | null = null;
  const rules = ing.spec.rules ?? [];
  const template = templateOf(parsed, settings);
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    const raw = rule.host ?? '';
    const problem = hostProblem(raw);
    if (problem) {
      warnAbout(warnings, key, `spec.rules[${i}].host`, `${problem}; rule ignored`);
      continue;
    }
    const host = raw === '' ? DEFAULT_SERVER : raw;
    if (named === null ? !hosts.includes(host) : !named.has(host)) {
      hosts.push(host);
      if (named !== null) named.add(host);
      else if (hosts.length > MANY_HOSTS) named = new Set(hosts);
    }
    const rulePaths = rule.http?.paths ?? [];
    for (let j = 0; j < rulePaths.length; j++) {
      const p = rulePaths[j]!;
      const path = p.path === undefined || p.path === '' ? ROOT_PATH : p.path;
      const pathType: PathType = p.pathType ?? 'ImplementationSpecific';
      const pp = pathProblem(path, pathType, settings.strictValidatePathType);
      if (pp) {
        warnAbout(warnings, key, `spec.rules[${i}].http.paths[${j}].path`, `${pp}; path ignored`);
        continue;
      }
      const inspected = deepInspectionMatch(path);
      if (inspected) warnAbout(warnings, key, `spec.rules[${i}].http.paths[${j}].path`, `${DEEP_INSPECTION_WARNING} (${inspected}); served here, where a path is escaped and never a file path`);
      const u: BackendUse | string = lastUse !== null && sameServicePort(lastBackend!, p.backend) ? lastUse : backendUse(ns, p.backend);
      if (typeof u === 'string') {
        warnAbout(warnings, key, `spec.rules[${i}].http.paths[${j}].backend`, `${u}; path ignored (requests fall to the host's other locations or the default backend)`);
        continue;
      }
      lastBackend = p.backend;
      lastUse = u;
      paths.push({ host, use: u, location: makeLocation(path, pathType, ref, u, u.name, template, settings, false) });
    }
  }

  // As ingress-nginx warns: without it the cookie's Path is the location's regular expression.
  if (paths.length > 0 && parsed.affinity.type === 'cookie' && parsed.rewrite.useRegex && parsed.affinity.cookie.path === '') {
    warnAbout(warnings, key, 'metadata.annotations', 'session-cookie-path should be set when use-regex is true (the cookie\'s Path is the Ingress path otherwise, a regular expression)');
  }

  const rootBackend = defaultBackend?.name ?? DEFAULT_UPSTREAM;
  const catchAll = defaultBackend !== null && rules.length === 0;
  let catchAllLocation: Location | null = null;
  if (catchAll && defaultBackend) {
    // As ingress-nginx: the catch-all takes the Ingress's annotations but not its redirect and rewrite.
    const location = makeLocation(ROOT_PATH, 'Prefix', ref, defaultBackend, defaultBackend.name, template, settings, false);
    catchAllLocation = { ...location, settings: withLocationSettings(location.settings, { redirect: null, rewrite: defaultAnnotations(settings).rewrite }) };
  }

  return new Fragment(
    key, ref, parsed, exactArray(hosts), exactArray(paths), defaultBackend, catchAll, ing.spec.tls ?? [], catchAllLocation, staticReasonOf(parsed, settings), warnings,
    { backend: rootBackend, template, settings },
  );
}
