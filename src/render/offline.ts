// Rendering without a running NGINX (render, replay): the fixed runtime offline output is
// rendered for, and `nginx -t` in a scratch prefix that has the fallback certificate and the
// auxiliary files. Paths in nginx -t's message are replaced by <prefix>.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Configuration } from '../model/core/types.js';
import { ensureFallbackCertificate } from './fallback-cert.js';
import { auxiliaryFiles, type Renderer } from './engine.js';
import { defaultRuntime, preparePrefix, type NginxRuntime } from './runtime.js';

/**
 * The runtime offline configurations are rendered for: fixed paths and resolver, so that output
 * never depends on the machine, a temporary directory or /etc/resolv.conf.
 */
export function offlineRuntime(defaultServerPort: number): NginxRuntime {
  return defaultRuntime({
    prefix: '/var/lib/ingress-rx',
    luaDir: '/usr/share/ingress-rx/lua',
    defaultServerPort,
    resolvers: ['127.0.0.1'],
  });
}

export interface OfflineTestResult {
  ok: boolean;
  error?: string;
}

/** A scratch runtime in a new temporary directory, with its fallback certificate in place. */
export async function scratchRuntime(defaultServerPort: number): Promise<NginxRuntime> {
  const prefix = mkdtempSync(join(tmpdir(), 'ingress-rx-test-'));
  await ensureFallbackCertificate(join(prefix, 'ssl'));
  return defaultRuntime({ prefix, defaultServerPort, resolvers: ['127.0.0.1'], workerProcesses: '1' });
}

export function testOffline(renderer: Renderer, config: Configuration, rt: NginxRuntime, nginxBinary = '/usr/sbin/nginx'): OfflineTestResult {
  try {
    preparePrefix(rt);
    for (const f of auxiliaryFiles(config, rt)) {
      mkdirSync(dirname(f.path), { recursive: true });
      writeFileSync(f.path, f.content, { mode: f.mode ?? 0o644, encoding: f.encoding ?? 'utf8' });
    }
    writeFileSync(rt.confPath, renderer.render(config, rt));
    const res = spawnSync(nginxBinary, ['-t', '-q', '-p', rt.prefix, '-e', rt.errorLogPath, '-c', rt.confPath], { encoding: 'utf8', timeout: 120_000 });
    if (res.status === 0) return { ok: true };
    return { ok: false, error: `nginx -t failed: ${(res.stderr || res.error?.message || `exit ${res.status}`).trim().replaceAll(rt.prefix, '<prefix>')}` };
  } catch (err) {
    return { ok: false, error: `nginx -t: ${(err as Error).message}` };
  }
}
