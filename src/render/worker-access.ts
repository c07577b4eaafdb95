// Can NGINX's workers reach what they read and write at run time? A master started as root runs
// its workers as another user (`user`, else NGINX's default nobody): they must traverse every
// directory above the prefix (htpasswd files, request-body temp files, nginx.conf for dbg) and
// above the Lua modules. Checked at start; the answer names the directory that stops them. Lua
// modules they cannot reach (a checkout under a 0700 directory) are copied into the prefix.
import { chmodSync, cpSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { NginxRuntime } from './runtime.js';

export interface WorkerUser {
  name: string;
  uid: number;
  gid: number;
}

/** The user NGINX's workers run as when the master is root: `user` (name [group]) or nobody:nogroup. */
export function workerUser(runtime: NginxRuntime, files: { passwd?: string; group?: string } = {}): WorkerUser {
  const [name = 'nobody', groupName] = (runtime.user ?? '').trim().split(/\s+/).filter(Boolean);
  const passwd = readLines(files.passwd ?? '/etc/passwd');
  const group = readLines(files.group ?? '/etc/group');
  const entry = passwd.find((l) => l.split(':')[0] === name)?.split(':');
  const uid = entry ? Number(entry[2]) : 65534;
  // NGINX's default group is nogroup (or the user's group when `user` names none).
  const gname = groupName ?? (runtime.user ? undefined : 'nogroup');
  const gentry = gname === undefined ? undefined : group.find((l) => l.split(':')[0] === gname)?.split(':');
  const gid = gentry ? Number(gentry[2]) : entry ? Number(entry[3]) : 65534;
  return { name, uid, gid };
}

function readLines(path: string): string[] {
  try {
    return readFileSync(path, 'utf8').split('\n');
  } catch {
    return [];
  }
}

/** Whether `user` may search (x) the directory. */
function canTraverse(dir: string, user: WorkerUser): { ok: boolean; mode: number; uid: number } {
  const st = statSync(dir);
  const mode = st.mode & 0o777;
  const bit = st.uid === user.uid ? 0o100 : st.gid === user.gid ? 0o010 : 0o001;
  return { ok: (mode & bit) !== 0, mode, uid: st.uid };
}

interface AccessOptions {
  /** The controller's uid (default: this process's). */
  uid?: number;
  user?: WorkerUser;
}

/** The workers' user when the master runs as root, else null: the workers are this user, who reaches what it made. */
function rootWorkers(runtime: NginxRuntime, opts: AccessOptions): WorkerUser | null {
  return (opts.uid ?? process.getuid?.() ?? 0) === 0 ? opts.user ?? workerUser(runtime) : null;
}

/** The first directory above (or at) `target` that `user` cannot traverse, or null. */
function blockedAt(target: string, user: WorkerUser): { dir: string; mode: number; uid: number } | null {
  for (const dir of ancestors(resolve(target))) {
    const t = canTraverse(dir, user);
    if (!t.ok) return { dir, mode: t.mode, uid: t.uid };
  }
  return null;
}

/**
 * Null when the workers can reach the prefix and the Lua modules (always, unless the controller
 * runs as root); else a message naming the first directory they cannot traverse.
 */
export function workerAccessProblem(runtime: NginxRuntime, opts: AccessOptions = {}): string | null {
  const user = rootWorkers(runtime, opts);
  if (user === null) return null;
  for (const [what, target] of [['--workdir', runtime.prefix], ['the Lua modules', runtime.luaDir]] as const) {
    const b = blockedAt(target, user);
    if (b) {
      return `NGINX's workers run as ${user.name} (uid ${user.uid}) and cannot enter ${b.dir} (mode ${b.mode.toString(8).padStart(4, '0')}, owner uid ${b.uid}), above ${what} ${target}: `
        + 'basic auth, request bodies written to disk and dbg conf would fail. Choose a directory they can reach, or let them in (chmod o+x).';
    }
  }
  return null;
}

/**
 * The runtime NGINX should start with: when the workers cannot reach the Lua modules but can
 * reach the prefix (a checkout or install under a directory only its owner enters), the modules
 * are copied to `<prefix>/lua` and read from there; otherwise `runtime` itself.
 */
export function withLuaInReach(runtime: NginxRuntime, opts: AccessOptions = {}): NginxRuntime {
  const user = rootWorkers(runtime, opts);
  if (user === null || blockedAt(runtime.luaDir, user) === null || blockedAt(runtime.prefix, user) !== null) return runtime;
  const luaDir = join(runtime.prefix, 'lua');
  cpSync(runtime.luaDir, luaDir, { recursive: true });
  chmodSync(luaDir, 0o755);
  return { ...runtime, luaDir };
}

/** `/`, `/a`, `/a/b` for `/a/b`. */
function ancestors(path: string): string[] {
  const out: string[] = [];
  for (let p = path; ; p = dirname(p)) {
    out.unshift(p);
    if (dirname(p) === p) break;
  }
  return out;
}
