// Backend (upstream) names are ingress-nginx's `<namespace>-<service>-<port>` (and
// `custom-default-backend-<namespace>-<service>`), part of the Lua wire contract and of metric
// labels, but not injective: Service team-x/auth and team/x-auth on port 80 are both
// team-x-auth-80, and the younger Ingress's paths would be served by the older one's Service,
// behind none of that Service's own Ingress annotations. The oldest use keeps the name; a younger
// use of another Service is renamed `<namespace>/<service>:<port>` (a default-backend Service
// `<namespace>/<service>`), spellings no ingress-nginx name has (`/` and `:` are in no
// Kubernetes name), with a warning.
import { customDefaultBackendName } from './annotations/defaultbackend.js';
import { withLocationSettings } from '../core/location-settings.js';
import type { BackendUse, IngressFragment, PathEntry } from './fragments.js';
import type { Location, ModelWarning } from '../core/types.js';
import { listChanges } from '../core/list-changes.js';

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
 * come back as the same objects, so the topology's memos keep working. Which names more than one
 * Service port uses is tallied across calls from the fragments that changed, so that a list
 * without such a name (the usual case) costs what changed, not the whole list.
 */
export function createBackendNameClaims(): (fragments: readonly IngressFragment[]) => IngressFragment[] {
  const memo = new WeakMap<IngressFragment, Claimed>();
  const tally = new NameTally();
  let last: readonly IngressFragment[] | null = null;
  return (fragments) => {
    tally.update(last, fragments);
    last = fragments;
    return tally.conflicted === 0 ? fragments as IngressFragment[] : claimAll(fragments, memo);
  };
}

function claimAll(fragments: readonly IngressFragment[], memo: WeakMap<IngressFragment, Claimed>): IngressFragment[] {
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
}

const sameWay = (a: BackendUse, b: BackendUse) => a === b || (a.serviceKey === b.serviceKey && a.port === b.port);

/** Uses of a name with another Service port than its first. */
interface OtherWay { use: BackendUse; users: number }

/**
 * For each name, the Service ports it is used with and how many uses each has; a name with more
 * than one is a conflict. A name's first way is kept in two maps of one entry per name (no
 * object per name: the full tally of 10k Ingresses allocates next to nothing), others aside.
 */
class NameTally {
  private readonly first = new Map<string, BackendUse>();
  private readonly firstUsers = new Map<string, number>();
  private readonly others = new Map<string, OtherWay[]>();

  /** How many names more than one Service port uses. */
  get conflicted(): number {
    return this.others.size;
  }

  /** From the tally of `before` to that of `after`. */
  update(before: readonly IngressFragment[] | null, after: readonly IngressFragment[]): void {
    if (before === after) return;
    if (before !== null && before.length === after.length) {
      // An update keeps each Ingress in its place: only the places whose fragment changed count.
      let changed = 0;
      for (let i = 0; i < after.length && changed <= after.length / 4; i++) if (before[i] !== after[i]) changed++;
      if (changed <= after.length / 4) {
        for (let i = 0; i < after.length; i++) {
          if (before[i] === after[i]) continue;
          this.count(before[i]!, -1);
          this.count(after[i]!, 1);
        }
        return;
      }
    } else if (before !== null) {
      // An Ingress added or removed: the lists differ in one place.
      const diff = listChanges(before, after, Math.max(32, after.length / 4));
      if (diff) {
        for (const f of diff.removed) this.count(f, -1);
        for (const f of diff.added) this.count(f, 1);
        return;
      }
    }
    this.first.clear();
    this.firstUsers.clear();
    this.others.clear();
    for (let i = 0; i < after.length; i++) this.count(after[i]!, 1);
  }

  /** Adds (1) or takes away (-1) the uses of a fragment: each of its paths, its default backends. */
  private count(f: IngressFragment, delta: 1 | -1): void {
    if (f.parsed.defaultBackendService) this.countUse(defaultBackendUse(f)!, delta);
    if (f.defaultBackend) this.countUse(f.defaultBackend, delta);
    for (let i = 0; i < f.paths.length; i++) this.countUse(f.paths[i]!.use, delta);
  }

  private countUse(use: BackendUse, delta: 1 | -1): void {
    const name = use.name;
    const way = this.first.get(name);
    if (way === undefined) {
      this.first.set(name, use);
      this.firstUsers.set(name, 1);
    } else if (sameWay(way, use)) {
      const users = this.firstUsers.get(name)! + delta;
      if (users > 0) this.firstUsers.set(name, users);
      else this.dropFirst(name);
    } else this.countOther(name, use, delta);
  }

  /** The name's first way has no user left: another takes its place, or the name goes. */
  private dropFirst(name: string): void {
    const rest = this.others.get(name);
    if (!rest) {
      this.first.delete(name);
      this.firstUsers.delete(name);
      return;
    }
    const next = rest.pop()!;
    if (rest.length === 0) this.others.delete(name);
    this.first.set(name, next.use);
    this.firstUsers.set(name, next.users);
  }

  private countOther(name: string, use: BackendUse, delta: 1 | -1): void {
    let rest = this.others.get(name);
    if (!rest) this.others.set(name, (rest = []));
    let at = -1;
    for (let i = 0; i < rest.length; i++) if (sameWay(rest[i]!.use, use)) at = i;
    if (at < 0) rest.push({ use, users: delta });
    else if ((rest[at]!.users += delta) === 0) rest.splice(at, 1);
    if (rest.length === 0) this.others.delete(name);
  }
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
    const errors = loc.settings.defaultBackend !== null ? names.get(loc.settings.defaultBackend) : undefined;
    if (backend === undefined && errors === undefined) return loc;
    return { ...loc, backend: backend ?? loc.backend, settings: errors === undefined ? loc.settings : withLocationSettings(loc.settings, { defaultBackend: errors }) };
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
