// The control server's two locks on disk: the directory of its unix socket, which only the
// controller's user may enter, and the per-start token in it (see docs/security.md).
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Where the control server listens and where its token lives (NginxRuntime has both). */
export interface ControlPaths {
  controlSocketPath: string;
  controlTokenPath: string;
}

/** How a client reaches the control server: its socket and the token every handler checks. */
export interface ControlChannel {
  socketPath: string;
  /** Read when a request is made, so a channel made before the token exists still works. */
  token(): string;
}

/**
 * The largest body the configuration endpoint takes (nginx.conf.liquid's client_max_body_size
 * and client_body_buffer_size of /configuration): a bigger POST is answered 413.
 */
export const CONFIGURATION_BODY_BYTES = 21 * 1024 * 1024;

/** sun_path holds 108 bytes with its NUL; NGINX refuses a longer path only when it binds. */
const MAX_SOCKET_PATH = 107;

/** Creates the socket and token directories, mode 0700. */
export function prepareControlDirs(paths: ControlPaths): void {
  if (Buffer.byteLength(paths.controlSocketPath) > MAX_SOCKET_PATH) {
    throw new Error(`the control socket path ${paths.controlSocketPath} is longer than ${MAX_SOCKET_PATH} bytes; use a shorter --workdir`);
  }
  for (const d of new Set([dirname(paths.controlSocketPath), dirname(paths.controlTokenPath)])) {
    mkdirSync(d, { recursive: true, mode: 0o700 });
    chmodSync(d, 0o700);
  }
}

/** A new random token, written with mode 0600 (write, then rename: never half a token). */
export function writeControlToken(paths: ControlPaths): string {
  prepareControlDirs(paths);
  const token = randomBytes(32).toString('hex');
  const tmp = `${paths.controlTokenPath}.tmp-${process.pid}`;
  writeFileSync(tmp, token, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, paths.controlTokenPath);
  return token;
}

export function readControlToken(paths: ControlPaths): string {
  return readFileSync(paths.controlTokenPath, 'utf8').trim();
}

/** The channel to the control server of a runtime; the token is read from its file. */
export function controlChannel(paths: ControlPaths): ControlChannel {
  return { socketPath: paths.controlSocketPath, token: () => readControlToken(paths) };
}
