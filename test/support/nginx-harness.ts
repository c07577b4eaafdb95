// A real NGINX for render and reload tests: a temp prefix, free loopback ports, the fallback
// certificate, our renderer and the NginxProcess actor. Always `await h.close()` in finally.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { createRenderer, type Renderer } from '../../src/render/engine.js';
import { defaultRuntime, preparePrefix, DEFAULT_TEMPLATE_DIR, type NginxRuntime } from '../../src/render/runtime.js';
import { createNginxProcess, type NginxProcess } from '../../src/actors/nginx-process.js';
import { ensureFallbackCertificate } from '../../src/render/fallback-cert.js';
import { controlChannel, writeControlToken } from '../../src/render/control.js';
import { controlRequest, type ControlResponse } from '../../src/actors/control-client.js';
import { silentLogger, type Logger } from '../../src/log.js';
import type { Backend } from '../../src/model/core/types.js';
import { freePorts } from './ports.js';
import { withLuaInReach } from '../../src/render/worker-access.js';
import { sendRequest } from './local-harness.js';
import type { Target } from './protocols.js';

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface NginxHarness {
  prefix: string;
  runtime: NginxRuntime;
  renderer: Renderer;
  nginx: NginxProcess;
  logger: Logger;
  /** `nginx -t` of a rendered text (written next to the live file). */
  test(text: string): Promise<{ ok: boolean; output: string }>;
  /** POSTs backends to the Lua configuration endpoint; returns the status code. */
  postBackends(backends: Backend[]): Promise<number>;
  /** A request to the control server (unix socket, with the token unless `anonymous`). */
  control(path: string, opts?: { method?: string; body?: string; anonymous?: boolean }): Promise<ControlResponse>;
  /** GET (or another method) on 127.0.0.1:port with a Host header. */
  http(port: number, path: string, opts?: { host?: string; method?: string; headers?: Record<string, string> }): Promise<HttpResult>;
  close(): Promise<void>;
}

export async function createNginxHarness(opts: { templateDir?: string; logger?: Logger; runtime?: Partial<NginxRuntime> } = {}): Promise<NginxHarness> {
  const prefix = mkdtempSync(join(tmpdir(), 'ingress-rx-nginx-'));
  const [httpPort, httpsPort, statusPort, streamPort, defaultServerPort] = await freePorts(5);
  const logger = opts.logger ?? silentLogger();
  const base = defaultRuntime({ prefix });
  const configured = defaultRuntime({
    prefix,
    listenAddresses: ['127.0.0.1'],
    httpPort: httpPort!, httpsPort: httpsPort!, statusPort: statusPort!, streamPort: streamPort!, defaultServerPort: defaultServerPort!,
    workerProcesses: '1',
    resolvers: ['127.0.0.1'],
    accessLogPath: join(prefix, 'logs', 'access.log'),
    fallbackCert: base.fallbackCert,
    // The echo backends run on loopback, as in local mode.
    upstreamAddresses: { allow: ['loopback'], ownPorts: [httpPort!, httpsPort!, defaultServerPort!] },
    ...opts.runtime,
  });
  preparePrefix(configured);
  const runtime = withLuaInReach(configured);
  writeControlToken(runtime);
  await ensureFallbackCertificate(join(prefix, 'ssl'));
  const renderer = createRenderer({ templateDir: opts.templateDir ?? DEFAULT_TEMPLATE_DIR, logger });
  const nginx = createNginxProcess({ runtime, logger, restartBackoffMs: 50 });
  let n = 0;
  const http: NginxHarness['http'] = (port, path, o = {}) => new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: o.method ?? 'GET', headers: { host: o.host ?? 'localhost', ...o.headers }, agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: ${path}`)));
    req.on('error', reject);
    req.end();
  });
  return {
    prefix, runtime, renderer, nginx, logger, http,
    async test(text) {
      const file = join(prefix, `test-${++n}.conf`);
      writeFileSync(file, text);
      return nginx.test(file);
    },
    async postBackends(backends) {
      return (await controlRequest(controlChannel(runtime), 'POST', '/configuration/backends', { body: JSON.stringify(backends) })).status;
    },
    control(path, o = {}) {
      return controlRequest(controlChannel(runtime), o.method ?? 'GET', path, { body: o.body, anonymous: o.anonymous, timeoutMs: 10_000 });
    },
    async close() {
      try {
        await nginx.quit(5000);
      } finally {
        rmSync(prefix, { recursive: true, force: true });
      }
    },
  };
}

/**
 * The shape of an nginx.conf: each directive as `name/argc`, blocks as `{` … `}`, Lua block
 * bodies skipped, and a `CTRL` mark for a control character inside a quoted string. A value
 * that broke out of its string, or smuggled a newline into one, changes this shape.
 */
export function confStructure(text: string): string[] {
  const out: string[] = [];
  let words: string[] = [];
  let i = 0;
  const n = text.length;
  const quoted = (q: string): void => {
    const start = ++i;
    while (i < n && text[i] !== q) i += text[i] === '\\' ? 2 : 1;
    if (/[\u0000-\u001f\u007f]/.test(text.slice(start, i))) out.push('CTRL');
    i++;
  };
  while (i < n) {
    const c = text[i]!;
    if (/\s/.test(c)) { i++; continue; }
    if (c === '#') { while (i < n && text[i] !== '\n') i++; continue; }
    if (c === '"' || c === "'") { quoted(c); words.push('S'); continue; }
    if (c === ';') { out.push(`${words[0]}/${words.length}`); words = []; i++; continue; }
    if (c === '{') {
      out.push(`${words[0]}/${words.length}{`);
      const lua = (words[0] ?? '').endsWith('_by_lua_block');
      words = [];
      i++;
      if (lua) {
        let depth = 1;
        while (i < n && depth > 0) {
          const d = text[i]!;
          if (d === '"' || d === "'") { quoted(d); continue; }
          if (d === '{') depth++;
          if (d === '}') depth--;
          i++;
        }
        out.push('}');
      }
      continue;
    }
    if (c === '}') { out.push('}'); i++; continue; }
    let w = '';
    while (i < n && !/[\s;{}"']/.test(text[i]!)) w += text[i++];
    // `$var"..."`-style concatenations are one word for NGINX; keep them together.
    while (i < n && (text[i] === '"' || text[i] === "'") && w !== '') quoted(text[i]!);
    words.push(words.length === 0 ? w : 'A');
  }
  return out;
}

/** The harness's NGINX as a target of the protocol matrix (test/support/protocols.ts): its HTTP and HTTPS listeners. */
export function harnessTarget(h: NginxHarness): Target {
  const ports = { http: h.runtime.httpPort, https: h.runtime.httpsPort };
  return {
    ports: { ...ports, status: h.runtime.statusPort, stream: h.runtime.streamPort, healthz: 0, defaultServer: h.runtime.defaultServerPort },
    workdir: h.prefix,
    request: (host, path, opts = {}) => sendRequest(opts.port ?? (opts.https ? ports.https : ports.http), host, path, opts),
  };
}
