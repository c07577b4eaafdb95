// Debian's php-fpm as a test-owned process: its own configuration, pid and logs in a temporary
// directory, one static pool on a free loopback port serving the scripts written there (never the
// system service). Workers run as nobody when the test runs as root (php-fpm refuses root workers).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from './ports.js';
import { waitFor } from './wait.js';

export interface PhpFpm {
  /** The directory the scripts are in (the document root). */
  root: string;
  address: string;
  port: number;
  /** What php-fpm logged (its error log). */
  log(): string;
  close(): Promise<void>;
}

/** The php-fpm binary Debian installs (php-fpm8.2 on bookworm). */
export function phpFpmBinary(): string {
  const found = readdirSync('/usr/sbin').filter((f) => /^php-fpm\d+\.\d+$/.test(f)).sort().pop();
  if (!found) throw new Error('php-fpm is not installed (scripts/setup.sh installs Debian\'s php-fpm)');
  return join('/usr/sbin', found);
}

export async function startPhpFpm(scripts: Record<string, string>): Promise<PhpFpm> {
  const dir = mkdtempSync(join(tmpdir(), 'irx-php-fpm-'));
  chmodSync(dir, 0o755);
  const root = join(dir, 'www');
  mkdirSync(root, { mode: 0o755 });
  for (const [name, text] of Object.entries(scripts)) writeFileSync(join(root, name), text, { mode: 0o644 });
  const [port] = await freePorts(1);
  const address = '127.0.0.1';
  const asRoot = process.getuid?.() === 0;
  const conf = join(dir, 'php-fpm.conf');
  writeFileSync(conf, [
    '[global]', `pid = ${join(dir, 'php-fpm.pid')}`, `error_log = ${join(dir, 'error.log')}`, 'daemonize = no',
    '[www]', `listen = ${address}:${port}`, `listen.allowed_clients = ${address}`,
    ...(asRoot ? ['user = nobody', 'group = nogroup'] : []),
    'pm = static', 'pm.max_children = 2', 'clear_env = yes', 'catch_workers_output = yes', '',
  ].join('\n'));
  const child: ChildProcess = spawn(phpFpmBinary(), ['--fpm-config', conf, '--nodaemonize', '-n', ...(asRoot ? ['--allow-to-run-as-root'] : [])],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  const log = () => out + (existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '');
  await waitFor(() => new Promise<boolean>((resolve) => {
    if (child.exitCode !== null) throw new Error(`php-fpm exited: ${out}`);
    const s = createConnection({ host: address, port }, () => { s.destroy(); resolve(true); });
    s.on('error', () => resolve(false));
  }), { timeoutMs: 15_000, what: 'php-fpm to listen' });
  return {
    root, address, port, log,
    async close() {
      child.kill('SIGQUIT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
