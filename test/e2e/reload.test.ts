// The reload actor against a real NGINX and real HTTP: first reload starts NGINX, reloads
// happen only when asked, a configuration NGINX refuses on SIGHUP (or, with a template that
// writes no reload log, nginx -t) leaves the old one serving, template changes (valid or not),
// serialised reloads, and annotations observed on the wire.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { firstValueFrom, from, toArray } from 'rxjs';
import { pino } from 'pino';
import { createReloadActor, reloadActor, type ReloadResult } from '../../src/actors/reload.js';
import { lineDiff } from '../../src/actors/line-diff.js';
import { DEFAULT_TEMPLATE_DIR } from '../../src/render/runtime.js';
import type { NginxProcess } from '../../src/actors/nginx-process.js';
import type { Configuration } from '../../src/model/core/types.js';
import { createNginxHarness, harnessTarget, type NginxHarness } from '../support/nginx-harness.js';
import { protocolClient, PROTOCOLS } from '../support/protocols.js';
import { backend, configuration, location, server } from '../support/config-builder.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { waitFor } from '../support/wait.js';

async function setup(templateDir?: string): Promise<{
  h: NginxHarness; echo: EchoServer; reload: (c: Configuration) => Promise<ReloadResult>; backends: (c: Configuration) => Promise<void>;
  /** `nginx -t` runs so far. */
  tests: () => number;
}> {
  const h = await createNginxHarness({ templateDir });
  const echo = await startEchoServer();
  let tests = 0;
  const nginx: NginxProcess = { ...h.nginx, events$: h.nginx.events$, test: (p) => { tests++; return h.nginx.test(p); } };
  const actor = createReloadActor({ renderer: h.renderer, nginx, runtime: h.runtime, logger: h.logger, reloadTimeoutMs: 10_000 });
  return {
    h, echo,
    tests: () => tests,
    reload: (c) => firstValueFrom(actor(c)),
    backends: async (c) => {
      const list = c.servers.flatMap((s) => s.locations.map((l) => l.backend)).filter((n, i, a) => a.indexOf(n) === i);
      // The built-in default backend is the default server, as the model's endpoints say.
      const defaultServer = { address: '127.0.0.1', port: String(h.runtime.defaultServerPort) };
      const status = await h.postBackends(list.map((n) => backend(n, [n === 'upstream-default-backend' ? defaultServer : echo.endpoint])));
      assert.is(status, 201);
      // Workers pick up posted backends on their next sync tick: wait until the first host proxies.
      const host = c.servers.find((s) => s.hostname !== '_')!.hostname;
      await waitFor(async () => (await h.http(h.runtime.httpPort, '/', { host })).status !== 503, { what: 'backends synced' });
    },
  };
}

const reconfigurings = (h: NginxHarness): number => (readFileSync(h.runtime.errorLogPath, 'utf8').match(/signal 1 \(SIGHUP\) received/g) ?? []).length;

test('the first reload starts NGINX; then real HTTP reaches the backend with the standard headers', async () => {
  const { h, echo, reload, backends } = await setup();
  try {
    const cfg = configuration([server('a.example.com')]);
    const r = await reload(cfg);
    assert.ok(r.ok, JSON.stringify(r));
    if (!r.ok) return;
    assert.is((await h.control('/configuration-checksum')).body, r.checksum);
    await backends(cfg);
    const res = await h.http(h.runtime.httpPort, '/hello?x=1', { host: 'a.example.com' });
    assert.is(res.status, 200, res.body);
    const body = JSON.parse(res.body);
    assert.is(body.path, '/hello?x=1');
    assert.is(body.headers['x-forwarded-for'], '127.0.0.1');
    assert.is(body.headers['x-forwarded-host'], 'a.example.com');
    assert.is(body.headers['x-forwarded-proto'], 'http');
    // As ingress-nginx: X-Original-URI only with proxy-add-original-uri-header.
    assert.is(body.headers['x-original-uri'], undefined);
    assert.match(body.headers['x-request-id'], /^[0-9a-f]{32}$/);
    assert.is((await h.http(h.runtime.httpPort, '/', { host: 'unknown.example.com' })).status, 404, 'unknown host → default backend 404');
  } finally {
    await h.close();
    await echo.close();
  }
});

test('NGINX reloads only when asked, and each reload brings new workers with the new checksum', async () => {
  const { h, echo, reload } = await setup();
  try {
    const r1 = await reload(configuration([server('a.example.com')]));
    assert.ok(r1.ok);
    assert.is(reconfigurings(h), 0);
    const workers = h.nginx.workerPids();
    const two = configuration([server('a.example.com'), server('b.example.com')]);
    const r2 = await reload(two);
    assert.ok(r2.ok);
    assert.is(reconfigurings(h), 1);
    // The actor writes the renderer's chunks: the file is exactly the rendered text.
    const written = readFileSync(h.runtime.confPath, 'utf8');
    assert.is(written, h.renderer.render(two, h.runtime));
    assert.ok(r2.ok && written.includes(`# Configuration checksum: ${r2.checksum}`));
    assert.ok(h.nginx.workerPids().some((p) => !workers.includes(p)), 'new workers after the reload');
    await h.control('/healthz');
    assert.is(reconfigurings(h), 1, 'no reload without a request');
    const r3 = await reload(configuration([server('a.example.com'), server('b.example.com')]));
    assert.ok(r3.ok && r2.ok && r3.checksum === r2.checksum, 'same configuration, same checksum');
    assert.is(reconfigurings(h), 2);
  } finally {
    await h.close();
    await echo.close();
  }
});

test('a configuration NGINX refuses on SIGHUP leaves the old one serving, without nginx -t; the file is put back, failed files kept (last 3)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ingress-rx-tpl-'));
  cpSync(DEFAULT_TEMPLATE_DIR, dir, { recursive: true });
  const { h, echo, reload, backends, tests } = await setup(dir);
  try {
    const cfg = configuration([server('a.example.com')]);
    assert.ok((await reload(cfg)).ok);
    await backends(cfg);
    const live = readFileSync(h.runtime.confPath, 'utf8');
    const workers = h.nginx.workerPids();
    const tpl = readFileSync(join(dir, 'server.liquid'), 'utf8');
    writeFileSync(join(dir, 'server.liquid'), tpl.replace('server_name {{ srv.serverName }};', 'server_name {{ srv.serverName }};\n        bogus_directive_x on;'));
    assert.equal(h.renderer.reloadTemplates(), { ok: true });
    for (let i = 0; i < 4; i++) {
      const r = await reload(configuration([server('a.example.com'), server(`n${i}.example.com`)]));
      assert.is(r.ok, false);
      // NGINX's own words, in nginx -t's form, naming the line of the file it read.
      if (!r.ok) assert.match(r.error, /^nginx: \[emerg\] unknown directive "bogus_directive_x" in .*nginx\.conf:\d+/);
    }
    assert.is(tests(), 0, 'NGINX checked each file itself');
    assert.is(reconfigurings(h), 4, 'each was sent to NGINX');
    assert.equal(h.nginx.workerPids(), workers, 'the same workers serve on');
    assert.is(readFileSync(h.runtime.confPath, 'utf8'), live, 'the live file is put back');
    const failed = readdirSync(h.prefix).filter((n) => n.startsWith('nginx.conf.failed-'));
    assert.is(failed.length, 3);
    assert.ok(failed.every((f) => readFileSync(join(h.prefix, f), 'utf8').includes('bogus_directive_x')));
    const res = await h.http(h.runtime.httpPort, '/', { host: 'a.example.com' });
    assert.is(res.status, 200, 'old configuration still serves');
    assert.is((await h.control('/configuration-checksum')).body, live.match(/^# Configuration checksum: (\w+)/)![1]);
  } finally {
    await h.close();
    await echo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a refusal only the reload finds (a port taken by another process; nginx -t passes it) is reported with NGINX\'s words, and the rest applies once it is gone', async () => {
  const { h, echo, reload, backends } = await setup();
  const taken = createServer();
  try {
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const busy = (taken.address() as AddressInfo).port;
    const cfg = configuration([server('a.example.com')]);
    assert.ok((await reload(cfg)).ok);
    await backends(cfg);
    const withBusyPort = configuration([server('a.example.com'), server('b.example.com', { serverSnippet: `listen 127.0.0.1:${busy};` })]);
    assert.ok((await h.test(h.renderer.render(withBusyPort, h.runtime))).ok, 'nginx -t does not bind, so it takes the file');
    const r = await reload(withBusyPort);
    assert.is(r.ok, false);
    if (!r.ok) assert.match(r.error, /nginx: \[emerg\] bind\(\) to 127\.0\.0\.1:\d+ failed \(98: Address already in use\)/);
    assert.is((await h.http(h.runtime.httpPort, '/', { host: 'a.example.com' })).status, 200, 'the old configuration serves');
    await new Promise<void>((resolve) => taken.close(() => resolve()));
    const again = await reload(withBusyPort);
    assert.ok(again.ok, JSON.stringify(again));
    assert.is((await h.http(busy, '/', { host: 'b.example.com' })).status, 200, 'the new listener serves');
  } finally {
    taken.close();
    await h.close();
    await echo.close();
  }
});

test('a template that does not write the reload log is tested with nginx -t before the reload, as before', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ingress-rx-tpl-'));
  cpSync(DEFAULT_TEMPLATE_DIR, dir, { recursive: true });
  const main = readFileSync(join(dir, 'nginx.conf.liquid'), 'utf8');
  writeFileSync(join(dir, 'nginx.conf.liquid'), main.replace(/^error_log \{\{ reload_log \| ql \}\} notice;\n/m, ''));
  const { h, echo, reload, tests } = await setup(dir);
  try {
    assert.ok((await reload(configuration([server('a.example.com')]))).ok);
    assert.is(tests(), 0, 'the start is the test');
    assert.ok((await reload(configuration([server('a.example.com'), server('b.example.com')]))).ok);
    assert.is(tests(), 1);
    assert.is(reconfigurings(h), 1);
    const r = await reload(configuration([server('a.example.com'), server('c.example.com', { serverSnippet: 'bogus_directive_x on;' })]));
    assert.is(r.ok, false);
    if (!r.ok) assert.match(r.error, /unknown directive "bogus_directive_x"/);
    assert.is(tests(), 2);
    assert.is(reconfigurings(h), 1, 'refused by nginx -t: never sent to NGINX');
  } finally {
    await h.close();
    await echo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('with no NGINX running the first configuration starts the master without nginx -t; the next is checked by NGINX on SIGHUP', async () => {
  const { h, reload, tests, echo } = await setup();
  try {
    const r1 = await reload(configuration([server('a.example.com')]));
    assert.ok(r1.ok, JSON.stringify(r1));
    assert.is(tests(), 0, 'the start was the test');
    assert.ok(h.nginx.masterPid() !== null);
    assert.is((await h.control('/configuration-checksum')).body, r1.ok ? r1.checksum : '');
    const r2 = await reload(configuration([server('a.example.com'), server('b.example.com')]));
    assert.ok(r2.ok, JSON.stringify(r2));
    assert.is(tests(), 0, 'the reload was the test');
    assert.is(reconfigurings(h), 1);
    assert.is((await h.control('/configuration-checksum')).body, r2.ok ? r2.checksum : '');
  } finally {
    await h.close();
    await echo.close();
  }
});

test('a first configuration that does not start NGINX is reported with its output; NGINX answers on the fallback', async () => {
  const h = await createNginxHarness();
  try {
    const fallback = configuration([]);
    const actor = createReloadActor({ renderer: h.renderer, nginx: h.nginx, runtime: h.runtime, logger: h.logger, reloadTimeoutMs: 10_000, fallback });
    const r = await firstValueFrom(actor(configuration([server('a.example.com', { serverSnippet: 'bogus_directive_x on;' })])));
    assert.is(r.ok, false);
    if (!r.ok) assert.match(r.error, /^nginx: \[emerg\] unknown directive "bogus_directive_x" in .*nginx\.conf:\d+$/m);
    assert.ok(h.nginx.masterPid() !== null, 'NGINX runs the fallback');
    assert.is(readFileSync(h.runtime.confPath, 'utf8'), h.renderer.render(fallback, h.runtime), 'the live file is the fallback');
    const failed = readdirSync(h.prefix).filter((n) => n.startsWith('nginx.conf.failed-'));
    assert.is(failed.length, 1);
    assert.ok(readFileSync(join(h.prefix, failed[0]!), 'utf8').includes('bogus_directive_x'));
    assert.is((await h.control('/healthz')).status, 200);
    assert.is(await h.postBackends([backend('upstream-default-backend', [{ address: '127.0.0.1', port: String(h.runtime.defaultServerPort) }])]), 201);
    await waitFor(async () => (await h.http(h.runtime.httpPort, '/', { host: 'a.example.com' })).status === 404, { what: 'the default backend answers 404' });

    // Once the configuration is fixed it is tested and reloaded as usual.
    const good = await firstValueFrom(actor(configuration([server('a.example.com')])));
    assert.ok(good.ok, JSON.stringify(good));
    assert.is(reconfigurings(h), 1);
    assert.is((await h.control('/configuration-checksum')).body, good.ok ? good.checksum : '');
  } finally {
    await h.close();
  }
});

test('HTTPS without a Secret serves the fallback certificate set by Lua; a missing fallback file fails nginx -t', async () => {
  const { h, echo, reload } = await setup();
  try {
    assert.ok((await reload(configuration([server('a.example.com')]))).ok);
    const cn = (servername?: string) => new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: h.runtime.httpsPort, rejectUnauthorized: false, ...(servername ? { servername } : {}) }, () => {
        const subject = socket.getPeerCertificate().subject?.CN;
        socket.end();
        resolve(String(subject));
      });
      socket.on('error', reject);
    });
    for (const name of ['a.example.com', 'unknown.example.com', undefined]) {
      assert.is(await cn(name), 'Kubernetes Ingress Controller Fake Certificate', String(name));
    }
    const missing = { ...h.runtime, fallbackCert: { certPath: join(h.prefix, 'none.pem'), keyPath: join(h.prefix, 'none.key') } };
    const t = await h.test(h.renderer.render(configuration([server('a.example.com')]), missing));
    assert.is(t.ok, false);
    assert.match(t.output, /none\.pem/);
  } finally {
    await h.close();
    await echo.close();
  }
});

test('template change: reloadTemplates + reload serves it; an invalid template keeps the old one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ingress-rx-tpl-'));
  cpSync(DEFAULT_TEMPLATE_DIR, dir, { recursive: true });
  const { h, echo, reload, backends } = await setup(dir);
  try {
    const cfg = configuration([server('a.example.com')]);
    assert.ok((await reload(cfg)).ok);
    await backends(cfg);
    const tpl = readFileSync(join(dir, 'server.liquid'), 'utf8');
    writeFileSync(join(dir, 'server.liquid'), tpl.replace('server_name {{ srv.serverName }};', 'server_name {{ srv.serverName }};\n        add_header X-Template "v2" always;'));
    assert.equal(h.renderer.reloadTemplates(), { ok: true });
    assert.ok((await reload(cfg)).ok, 'same model, new template → reload');
    assert.is((await h.http(h.runtime.httpPort, '/', { host: 'a.example.com' })).headers['x-template'], 'v2');

    writeFileSync(join(dir, 'location.liquid'), '{% if %} broken');
    const bad = h.renderer.reloadTemplates();
    assert.is(bad.ok, false);
    const r = await reload(configuration([server('a.example.com'), server('b.example.com')]));
    assert.ok(r.ok, 'the previous templates still render');
    assert.is((await h.http(h.runtime.httpPort, '/', { host: 'a.example.com' })).headers['x-template'], 'v2');
  } finally {
    await h.close();
    await echo.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('reloads never overlap; the operator form answers in order', async () => {
  const h = await createNginxHarness();
  try {
    // Each reload signal comes after the previous reload is done (the actor logs it as it returns).
    const events: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => { events.push(JSON.parse(line).msg as string); } });
    const nginx: NginxProcess = { ...h.nginx, events$: h.nginx.events$, reload: () => { events.push('signal'); return h.nginx.reload(); } };
    const deps = { renderer: h.renderer, nginx, runtime: h.runtime, logger };
    const actor = createReloadActor(deps);
    const results = await Promise.all([1, 2, 3].map((n) => firstValueFrom(actor(configuration(Array.from({ length: n }, (_, i) => server(`s${i}.example.com`)))))));
    assert.ok(results.every((r) => r.ok), JSON.stringify(results));
    assert.equal(events, ['reload: NGINX started', 'signal', 'reload: done', 'signal', 'reload: done']);
    const viaOperator = await firstValueFrom(from([configuration([server('x.example.com')]), configuration([server('y.example.com')])]).pipe(reloadActor(deps), toArray()));
    assert.is(viaOperator.length, 2);
    assert.ok(viaOperator.every((r) => r.ok));
    assert.ok(readFileSync(h.runtime.confPath, 'utf8').includes('## start server y.example.com'));
  } finally {
    await h.close();
  }
});

test('annotations on the wire over HTTP/1.1 and HTTP/2: basic auth, rewrite, redirects, CORS, allowlist, denied, vhost', async () => {
  const { h, echo, reload, backends } = await setup();
  try {
    const hash = execFileSync('openssl', ['passwd', '-apr1', 'secret']).toString().trim();
    const base = location().settings.rewrite;
    const cfg = configuration([
      server('auth.example.com', { locations: [location({ basicAuth: { type: 'basic', realm: 'Who "are" you', secret: 'default/basic', secretType: 'auth-file', users: [`foo:${hash}`] } })] }),
      server('re.example.com', { useRegex: true, locations: [location({ path: '/api(/|$)(.*)', pathType: 'ImplementationSpecific', rewrite: { ...base, target: '/$2', xForwardedPrefix: '/api' } })] }),
      server('misc.example.com', {
        locations: [
          location({ path: '/moved', pathType: 'Prefix', redirect: { url: 'https://new.example.com/x', code: 301 } }),
          location({ path: '/cors', pathType: 'Prefix', cors: { enabled: true, allowOrigin: ['https://a.example.com'], allowMethods: 'GET, PUT', allowHeaders: 'X-A', exposeHeaders: 'X-B', allowCredentials: true, maxAge: 60 } }),
          location({ path: '/private', pathType: 'Prefix', allowlist: ['10.0.0.0/8'] }),
          location({ path: '/denied', pathType: 'Prefix', denied: 'broken annotation' }),
          location({ path: '/vhost', pathType: 'Prefix', upstreamVhost: 'internal.svc' }),
          location({ path: '/snippet', pathType: 'Prefix', configurationSnippet: 'proxy_set_header X-Snippet "yes";' }),
          location({ path: '/', pathType: 'Prefix', rewrite: { ...base, appRoot: '/app' } }),
        ],
      }),
    ]);
    const r = await reload(cfg);
    assert.ok(r.ok, JSON.stringify(r));
    await backends(cfg);
    for (const protocol of PROTOCOLS) {
      const client = protocolClient(harnessTarget(h), protocol);
      const get = (host: string, path: string, headers: Record<string, string> = {}, method = 'GET') => client.request(host, path, { headers, method });

      const denied = await get('auth.example.com', '/');
      assert.is(denied.status, 401);
      assert.match(String(denied.headers['www-authenticate']), /Basic realm="Who "are" you"/);
      assert.is((await get('auth.example.com', '/', { authorization: `Basic ${Buffer.from('foo:secret').toString('base64')}` })).status, 200);
      assert.is((await get('auth.example.com', '/', { authorization: `Basic ${Buffer.from('foo:wrong').toString('base64')}` })).status, 401);

      const rw = await get('re.example.com', '/api/v1/items');
      assert.is(rw.status, 200);
      assert.is(JSON.parse(rw.body).path, '/v1/items');
      assert.is(JSON.parse(rw.body).headers['x-forwarded-prefix'], '/api');

      const moved = await get('misc.example.com', '/moved/a');
      assert.is(moved.status, 301);
      assert.is(moved.headers.location, 'https://new.example.com/x');

      const pre = await get('misc.example.com', '/cors/a', { origin: 'https://a.example.com' }, 'OPTIONS');
      assert.is(pre.status, 204);
      assert.is(pre.headers['access-control-allow-origin'], 'https://a.example.com');
      assert.is(pre.headers['access-control-allow-methods'], 'GET, PUT');
      assert.is(pre.headers['access-control-allow-credentials'], 'true');
      const simple = await get('misc.example.com', '/cors/a', { origin: 'https://a.example.com' });
      assert.is(simple.status, 200);
      assert.is(simple.headers['access-control-expose-headers'], 'X-B');
      const other = await get('misc.example.com', '/cors/a', { origin: 'https://evil.example.com' }, 'OPTIONS');
      assert.is(other.headers['access-control-allow-origin'], undefined);

      assert.is((await get('misc.example.com', '/private/x')).status, 403);
      assert.is((await get('misc.example.com', '/denied/x')).status, 503);
      // The standard proxy headers are set at http level; a location with a header of its own
      // (upstream-vhost, or one from a configuration-snippet) must repeat all of them.
      const vhost = JSON.parse((await get('misc.example.com', '/vhost/x')).body).headers;
      assert.is(vhost.host, 'internal.svc');
      assert.is(vhost['x-forwarded-host'], 'misc.example.com');
      assert.is(vhost['x-real-ip'], '127.0.0.1');
      const snippet = JSON.parse((await get('misc.example.com', '/snippet/x')).body).headers;
      assert.is(snippet['x-snippet'], 'yes');
      assert.is(snippet.host, 'misc.example.com');
      assert.is(snippet['x-forwarded-for'], '127.0.0.1');
      assert.match(snippet['x-request-id'], /^[0-9a-f]{32}$/);
      const root = await get('misc.example.com', '/');
      assert.is(root.status, 302);
      assert.is(root.headers.location, `${client.scheme}://misc.example.com/app`);
    }
  } finally {
    await h.close();
    await echo.close();
  }
});

test('a value the renderer refuses denies its location, named; the rest of the configuration applies', async () => {
  const { h, echo, reload } = await setup();
  try {
    assert.ok((await reload(configuration([server('a.example.com')]))).ok);
    const r = await reload(configuration([
      server('a.example.com', { locations: [location({ upstreamVhost: 'x\nreturn 200;' })] }),
      server('b.example.com'),
    ]));
    assert.ok(r.ok);
    if (r.ok) assert.match(r.problems.map((p) => p.message).join('\n'), /host a\.example\.com path \/: NGINX cannot be given upstream-vhost: control characters.*location denied \(503\)/);
    const live = readFileSync(h.runtime.confPath, 'utf8');
    assert.match(live, /# denied: upstream-vhost: control characters/);
    assert.ok(live.includes('## start server b.example.com'));
    assert.not.ok(live.includes('Host "x'));
  } finally {
    await h.close();
    await echo.close();
  }
});

test('lineDiff shows the changed middle as one unified hunk', () => {
  const d = lineDiff('a\nb\nc\nd\ne\n', 'a\nb\nX\nd\ne\n', 'nginx.conf', 1);
  assert.is(d, ['--- nginx.conf', '+++ nginx.conf', '@@ -2,3 +2,3 @@', ' b', '-c', '+X', ' d'].join('\n'));
  assert.is(lineDiff('same', 'same'), '');
});

test.run();
