// Backend (upstream) names are ingress-nginx's `<namespace>-<service>-<port>` (and
// `custom-default-backend-<namespace>-<service>`), part of the Lua wire contract and of metric
// labels, but not injective: Service team-x/auth and team/x-auth on port 80 are both
// team-x-auth-80, and the younger Ingress's paths would be served by the older one's Service,
// behind none of that Service's own Ingress annotations. The oldest use keeps the name; a younger
// use of another Service is renamed `<namespace>/<service>:<port>` (a default-backend Service
// `<namespace>/<service>`), spellings no ingress-nginx name has (`/` and `:` are in no
// Kubernetes name), with a warning.
import { customDefaultBackendName } from './annotations/defaultbackend.js';
import type { BackendUse, IngressFragment, PathEntry } from './fragments.js';
import type { Location, ModelWarning } from './types.js';

/** A default-backend annotation's Service as a use: its port is '' (it takes the Service's first). */
function defaultBackendUse(f: IngressFragment): BackendUse | null {
  const key = f.parsed.defaultBackendService;
  if (!key) return null;
  const slash = key.indexOf('/');
  return { name: customDefaultBackendName(key), namespace: key.slice(0, slash), service: key.slice(slash + 1), serviceKey: key, port: '' };
}

/** The injective name of a use whose ingress-nginx name is taken by another Service. */
export function injectiveBackendName(use: BackendUse): string {
  return use.port === '' ? `${use.namespace}/${use.service}` : `${use.namespace}/${use.service}:${use.port}`;
}

interface Claimed {
  signature: string;
  fragment: IngressFragment;
}

/**
 * Returns a function from the fragments (oldest first) to the same list with every younger
 * fragment whose backend name is another Service's given injective names. Unchanged fragments
 * come back as the same objects, so the topology's memos keep working.
 */
export function createBackendNameClaims(): (fragments: readonly IngressFragment[]) => IngressFragment[] {
  const memo = new WeakMap<IngressFragment, Claimed>();
  return (fragments) => {
    // Name → its first use (its fragment is looked up only for a conflict, which is rare).
    const owners = new Map<string, BackendUse>();
    let out: IngressFragment[] | null = null;
    for (let i = 0; i < fragments.length; i++) {
      const f = fragments[i]!;
      let conflicts: Conflict[] | null = null;
      const uses = f.paths;
      for (let j = -2; j < uses.length; j++) {
        const use = j === -2 ? (f.parsed.defaultBackendService ? defaultBackendUse(f) : null) : j === -1 ? f.defaultBackend : uses[j]!.use;
        if (use === null) continue;
        const owner = owners.get(use.name);
        if (owner === undefined) owners.set(use.name, use);
        else if ((owner.serviceKey !== use.serviceKey || owner.port !== use.port) && !conflicts?.some((c) => c.use.name === use.name)) {
          (conflicts ??= []).push({ use, owner, by: fragmentOf(fragments, owner) });
        }
      }
      if (!conflicts) continue;
      out ??= fragments.slice();
      out[i] = renamed(f, conflicts, memo);
    }
    return out ?? (fragments as IngressFragment[]);
  };
}

/** The first fragment that uses `use` (the same object, or the same default-backend Service). */
function fragmentOf(fragments: readonly IngressFragment[], use: BackendUse): IngressFragment {
  return fragments.find((f) => f.defaultBackend === use || f.paths.some((e) => e.use === use)
    || (use.port === '' && f.parsed.defaultBackendService === use.serviceKey))!;
}

interface Conflict {
  use: BackendUse;
  /** The use that has the name, and its fragment. */
  owner: BackendUse;
  by: IngressFragment;
}

const port = (use: BackendUse) => (use.port === '' ? ' (default-backend)' : ` port ${use.port}`);

function renamed(f: IngressFragment, conflicts: Conflict[], memo: WeakMap<IngressFragment, Claimed>): IngressFragment {
  const signature = conflicts.map((c) => `${c.use.name}>${c.owner.serviceKey}|${c.owner.port}|${c.by.key}`).join(',');
  const known = memo.get(f);
  if (known && known.signature === signature) return known.fragment;
  const names = new Map(conflicts.map((c) => [c.use.name, injectiveBackendName(c.use)]));
  const warnings: ModelWarning[] = conflicts.map(({ use, owner, by }) => ({
    object: `Ingress ${f.key}`, field: 'spec',
    message: `backend name ${use.name} of Service ${use.serviceKey}${port(use)} is already that of Service ${owner.serviceKey}${port(owner)} (Ingress ${by.key}); this Service's backend is named ${names.get(use.name)}`,
  }));
  const rename = (use: BackendUse): BackendUse => ({ ...use, name: names.get(use.name) ?? use.name });
  // A location names its backend and, with the default-backend annotation, its error backend.
  const relocate = (loc: Location): Location => {
    const backend = names.get(loc.backend);
    const errors = loc.defaultBackend !== null ? names.get(loc.defaultBackend) : undefined;
    return backend === undefined && errors === undefined ? loc : { ...loc, backend: backend ?? loc.backend, defaultBackend: errors ?? loc.defaultBackend };
  };
  const paths: PathEntry[] = f.paths.map((e) => {
    const location = relocate(e.location);
    return location === e.location ? e : { host: e.host, use: rename(e.use), location };
  });
  const fragment: IngressFragment = {
    ...f,
    paths,
    defaultBackend: f.defaultBackend && rename(f.defaultBackend),
    rootLocation: relocate(f.rootLocation),
    catchAllLocation: f.catchAllLocation && relocate(f.catchAllLocation),
    warnings: [...f.warnings, ...warnings],
  };
  memo.set(f, { signature, fragment });
  return fragment;
}
