// Asks the real NGINX whether it takes a directive: a minimal configuration (no modules, one
// server) with the given lines, checked by `nginx -t` in a scratch prefix. About 4 ms a check,
// so a test can compare a validator with NGINX on hundreds of values.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface OracleSnippet {
  main?: string;
  http?: string;
  server?: string;
  location?: string;
}

export interface NginxOracle {
  accepts(snippet: OracleSnippet): Promise<{ ok: boolean; output: string }>;
  /** Runs checks two at a time (the machine has two cores). */
  all<T>(items: T[], snippet: (item: T) => OracleSnippet): Promise<Array<{ item: T; ok: boolean; output: string }>>;
  close(): void;
}

export function createNginxOracle(): NginxOracle {
  const prefix = mkdtempSync(join(tmpdir(), 'irx-oracle-'));
  for (const d of ['logs', 'tmp']) mkdirSync(join(prefix, d), { recursive: true });
  let seq = 0;
  const accepts = (s: OracleSnippet) => new Promise<{ ok: boolean; output: string }>((resolve) => {
    const conf = join(prefix, `t${++seq}.conf`);
    const t = join(prefix, 'tmp');
    writeFileSync(conf, [
      `daemon off; pid ${join(prefix, 'nginx.pid')}; error_log ${join(prefix, 'logs', 'error.log')};`,
      s.main ?? '',
      'events {}',
      `http { access_log off; client_body_temp_path ${t}; proxy_temp_path ${t}; fastcgi_temp_path ${t}; uwsgi_temp_path ${t}; scgi_temp_path ${t};`,
      s.http ?? '',
      `server { listen 127.0.0.1:1; ${s.server ?? ''}`,
      `location / { ${s.location ?? ''} }`,
      '} }',
      '',
    ].join('\n'));
    execFile('/usr/sbin/nginx', ['-t', '-q', '-p', `${prefix}/`, '-c', conf, '-e', join(prefix, 'logs', 'error.log')], (err, stdout, stderr) => {
      rmSync(conf, { force: true });
      resolve({ ok: !err, output: `${stdout}${stderr}`.trim() });
    });
  });
  return {
    accepts,
    async all(items, snippet) {
      const out: Array<{ item: (typeof items)[number]; ok: boolean; output: string }> = [];
      for (let i = 0; i < items.length; i += 2) {
        const batch = items.slice(i, i + 2);
        const results = await Promise.all(batch.map((it) => accepts(snippet(it))));
        results.forEach((r, j) => out.push({ item: batch[j]!, ...r }));
      }
      return out;
    },
    close: () => rmSync(prefix, { recursive: true, force: true }),
  };
}
