// The flows users click through, in a real browser: Debian's headless Chromium against
// `ingress-rx local` over HTTPS, where it speaks HTTP/2 as it does to any TLS host. Each test
// asserts what the browser shows and does (page text, the URL after redirects, whether a fetch
// resolved, the protocol of the document), not only the headers a client library sees.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, navigationProtocol } from '../support/browser.js';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { generateCertificate } from '../support/lua-nginx.js';
import { ingress, service, slices, startLocal, tlsSecret, type LocalController } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';

const NS = 'web';
const P = 'nginx.ingress.kubernetes.io';
const HOSTS = ['app.test', 'www.shop.test', 'evil.test', 'api.shop.test', 'sticky.test', 'secure.test', 'errors.test'];
const certDir = mkdtempSync(join(tmpdir(), 'irx-browser-'));
const servers: Server[] = [];
const echoes: EchoServer[] = [];
let ctl: LocalController;
let browser: Browser;
let https = 0;
let http = 0;

/** What the services of this test were asked. */
const seen = { auth: [] as string[], signin: [] as string[], api: [] as string[] };

const a = (annotations: Record<string, string>) => Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${P}/${k}`, v]));
const site = (host: string, path = '/') => `https://${host}:${https}${path}`;
const html = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...headers });
  res.end(`<!doctype html><html><body>${body}</body></html>`);
};
const cookie = (req: IncomingMessage, name: string) => new RegExp(`(?:^|;\\s*)${name}=([^;]*)`).exec(req.headers.cookie ?? '')?.[1];

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ address: string; port: number }> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { address: '127.0.0.1', port: (server.address() as AddressInfo).port };
}

/** A new browser context (its own cookies and HSTS state) and a page in it. */
async function freshPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  return { context, page: await context.newPage() };
}

test.before(async () => {
  // oauth2-proxy's two endpoints: /oauth2/auth (auth-url: 202 with the user for a session
  // cookie, else 401) and /oauth2/start (auth-signin: signs in, sets the cookie, sends the
  // browser back to rd).
  const oauth2 = await serve((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/oauth2/auth') {
      seen.auth.push(`${req.headers['x-original-uri'] ?? req.url}`);
      const user = cookie(req, '_oauth2_proxy');
      if (!user) { res.writeHead(401).end(); return; }
      res.writeHead(202, { 'x-auth-request-user': user, 'x-auth-request-email': `${user}@example.org` }).end();
      return;
    }
    if (url.pathname === '/oauth2/start') {
      const rd = url.searchParams.get('rd') ?? '';
      seen.signin.push(rd);
      if (!rd.startsWith('/') || rd.startsWith('//')) { html(res, 400, 'bad rd'); return; }
      res.writeHead(302, { location: rd, 'set-cookie': '_oauth2_proxy=alice; Path=/; Secure; HttpOnly; SameSite=Lax' }).end();
      return;
    }
    html(res, 404, 'oauth2: no such page');
  });
  const app = await serve((req, res) => html(res, 200,
    `<h1 id="user">Hello ${req.headers['x-auth-request-user'] ?? 'nobody'}</h1><p id="email">${req.headers['x-auth-request-email'] ?? ''}</p><p id="path">${req.url}</p>`));
  const pages = await serve((req, res) => html(res, 200, `<h1>${req.headers.host}</h1>`));
  const api = await serve((req, res) => {
    seen.api.push(`${req.method} ${req.headers.origin ?? '-'} ${cookie(req, 'api_session') ?? '-'}`);
    if (req.url === '/login') {
      res.writeHead(200, { 'set-cookie': 'api_session=s1; Path=/; Secure; SameSite=None', 'content-type': 'text/plain' }).end('signed in');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, client: req.headers['x-client'] ?? null }));
  });
  const errorPages = await serve((req, res) => {
    const code = Number(req.headers['x-code'] ?? 500);
    html(res, code, `<h1 id="title">Custom error page</h1><p id="code">${code}</p><p id="uri">${req.headers['x-original-uri'] ?? ''}</p>`);
  });
  const errorsApp = await startEchoServer({ address: '127.0.3.10', name: 'errors-app' });
  const sticky = [await startEchoServer({ address: '127.0.3.20', name: 'sticky-a' }), await startEchoServer({ address: '127.0.3.21', name: 'sticky-b' })];
  echoes.push(errorsApp, ...sticky);

  const cert = await generateCertificate(certDir, 'app.test', HOSTS);
  const certPem = readFileSync(cert.certPath, 'utf8');
  const own = (name: string, endpoints: Array<{ address: string; port: number }>) => [service(NS, name), ...slices(NS, name, endpoints)];
  const tls = (host: string) => [{ hosts: [host], secretName: 'site-cert' }];

  ctl = await startLocal({
    files: {
      'services.json': [
        tlsSecret(NS, 'site-cert', certPem, readFileSync(cert.keyPath, 'utf8')),
        ...own('oauth2-proxy', [oauth2]), ...own('app', [app]), ...own('pages', [pages]), ...own('api', [api]),
        ...own('error-pages', [errorPages]), ...own('errors-app', [errorsApp]), ...own('sticky', sticky),
      ],
    },
  });
  https = ctl.ports.https;
  http = ctl.ports.http;
  ctl.write('ingresses.json', [
    // oauth2-proxy's documented setup: the app behind auth-url/auth-signin, oauth2-proxy itself on
    // /oauth2 of the same host without auth. Its docs write `https://$host/oauth2/start`; the test
    // host listens on a port of its own, so the sign-in URL names it.
    ingress(NS, 'app', {
      host: 'app.test', tls: tls('app.test'), paths: [{ path: '/', service: 'app' }],
      annotations: a({
        'auth-url': `http://${oauth2.address}:${oauth2.port}/oauth2/auth`,
        'auth-signin': `https://app.test:${https}/oauth2/start?rd=$escaped_request_uri`,
        'auth-response-headers': 'X-Auth-Request-User, X-Auth-Request-Email',
      }),
    }),
    ingress(NS, 'oauth2-proxy', { host: 'app.test', tls: tls('app.test'), paths: [{ path: '/oauth2', service: 'oauth2-proxy' }] }),
    ingress(NS, 'web', { host: 'www.shop.test', tls: tls('www.shop.test'), paths: [{ path: '/', service: 'pages' }] }),
    ingress(NS, 'evil', { host: 'evil.test', tls: tls('evil.test'), paths: [{ path: '/', service: 'pages' }] }),
    ingress(NS, 'api', {
      host: 'api.shop.test', tls: tls('api.shop.test'), paths: [{ path: '/', service: 'api' }],
      annotations: a({
        'enable-cors': 'true', 'cors-allow-origin': `https://www.shop.test:${https}`, 'cors-allow-credentials': 'true',
        'cors-allow-methods': 'GET, PUT, OPTIONS', 'cors-allow-headers': 'Content-Type, X-Client',
      }),
    }),
    ingress(NS, 'sticky', {
      host: 'sticky.test', tls: tls('sticky.test'), paths: [{ path: '/', service: 'sticky' }],
      annotations: a({ affinity: 'cookie', 'session-cookie-name': 'route' }),
    }),
    ingress(NS, 'secure', { host: 'secure.test', tls: tls('secure.test'), paths: [{ path: '/', service: 'app' }] }),
    ingress(NS, 'errors', {
      host: 'errors.test', tls: tls('errors.test'), paths: [{ path: '/', service: 'errors-app' }],
      annotations: a({ 'custom-http-errors': '404,503', 'default-backend': 'error-pages' }),
    }),
  ]);
  for (const host of HOSTS) await ctl.until(host, '/', (r) => r.status !== 404 || host === 'errors.test', { https: true, what: `${host} served` });
  await ctl.until('errors.test', '/__status/404', (r) => r.body.includes('Custom error page'), { https: true, what: 'the custom error page' });
  browser = await launchBrowser(certPem);
});

test.after(async () => {
  await browser?.close();
  await ctl?.stop();
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await Promise.all(echoes.map((s) => s.close()));
  rmSync(certDir, { recursive: true, force: true });
});

test('oauth2-proxy pattern: auth-url 401 → auth-signin with rd → a cookie → back to the page, the user forwarded [browser, HTTP/2]', async () => {
  const { context, page } = await freshPage();
  try {
    await page.goto(site('app.test', '/reports/q3?year=2026&view=a b'));
    assert.is(page.url(), site('app.test', '/reports/q3?year=2026&view=a%20b'), 'back on the page asked for, arguments kept');
    assert.is(await page.textContent('#user'), 'Hello alice', 'auth-response-headers reached the app');
    assert.is(await page.textContent('#email'), 'alice@example.org');
    assert.is(await navigationProtocol(page), 'h2');
    assert.equal(seen.signin, ['/reports/q3?year=2026&view=a%20b'], 'rd carried the escaped request URI to the sign-in once');
    assert.ok(seen.auth.length >= 2, 'asked without, then with the cookie');
    const cookies = await context.cookies(site('app.test'));
    assert.ok(cookies.some((c) => c.name === '_oauth2_proxy' && c.secure), 'the session cookie is stored');

    // Signed in, the next page loads at once: no new sign-in.
    await page.goto(site('app.test', '/other'));
    assert.is(page.url(), site('app.test', '/other'));
    assert.is(await page.textContent('#user'), 'Hello alice');
    assert.is(seen.signin.length, 1);
  } finally {
    await context.close();
  }
});

// The shop's page (www.shop.test) calls its API (api.shop.test): another origin of the same site,
// so the API's cookie goes along; evil.test is another site.
test('CORS with credentials: the allowed origin\'s preflight passes and its PUT is answered; another origin\'s fetch fails in the browser [browser, HTTP/2]', async () => {
  const { context, page } = await freshPage();
  try {
    await page.goto(site('api.shop.test', '/login'));
    assert.is(await page.textContent('body'), 'signed in');
    const put = () => page.evaluate(async (url) => {
      try {
        const r = await fetch(url, { method: 'PUT', credentials: 'include', headers: { 'X-Client': 'web', 'Content-Type': 'application/json' }, body: '{}' });
        return `resolved ${r.status} ${await r.text()}`;
      } catch (err) {
        return `rejected ${(err as Error).name}`;
      }
    }, site('api.shop.test', '/data'));

    await page.goto(site('www.shop.test'));
    assert.is(await navigationProtocol(page), 'h2');
    seen.api.length = 0;
    assert.is(await put(), 'resolved 200 {"method":"PUT","client":"web"}', 'the allowed origin gets the answer');
    const origin = `https://www.shop.test:${https}`;
    assert.ok(seen.api.includes(`PUT ${origin} s1`), `the PUT carried the api's cookie: ${seen.api.join(' | ')}`);
    assert.not.ok(seen.api.some((l) => l.startsWith('OPTIONS')), 'the preflight was answered by NGINX');

    await page.goto(site('evil.test'));
    seen.api.length = 0;
    assert.is(await put(), 'rejected TypeError', 'the browser refuses the answer to another origin');
    assert.not.ok(seen.api.some((l) => l.startsWith('PUT')), `the PUT was never sent: ${seen.api.join(' | ')}`);
  } finally {
    await context.close();
  }
});

test('cookie affinity: reloads of the page stay on one backend; without the cookie both serve [browser, HTTP/2]', async () => {
  const { context, page } = await freshPage();
  try {
    const backend = async () => (JSON.parse((await page.textContent('body')) ?? '{}') as { name?: string }).name;
    await page.goto(site('sticky.test', '/'));
    assert.is(await navigationProtocol(page), 'h2');
    const first = await backend();
    assert.ok(first === 'sticky-a' || first === 'sticky-b', String(first));
    assert.ok((await context.cookies(site('sticky.test'))).some((c) => c.name === 'route'), 'the affinity cookie is stored');
    for (let i = 0; i < 5; i++) {
      await page.reload();
      assert.is(await backend(), first, `reload ${i + 1}`);
    }
    // Without the cookie the balancer chooses again: the other backend answers at some point.
    await waitFor(async () => {
      await context.clearCookies();
      await page.reload();
      return (await backend()) !== first;
    }, { what: 'the other backend once the cookie is gone', timeoutMs: 30_000 });
  } finally {
    await context.close();
  }
});

test('ssl-redirect and HSTS: plain HTTP is sent to HTTPS; once HSTS is seen the browser upgrades by itself [browser, HTTP/2]', async () => {
  const { context, page } = await freshPage();
  try {
    // Before HSTS, http:// to the HTTPS port is plain HTTP there: NGINX answers 400.
    const before = await page.goto(`http://secure.test:${https}/hsts`);
    assert.is(before?.status(), 400);

    const r = await page.goto(`http://secure.test:${http}/landing?x=1`);
    assert.is(page.url(), site('secure.test', '/landing?x=1'), 'redirected to HTTPS, URI kept');
    assert.match(r?.headers()['strict-transport-security'] ?? '', /max-age=\d+/);
    assert.is(await navigationProtocol(page), 'h2');

    // The browser now upgrades http://secure.test itself, before anything reaches the network.
    await page.goto(`http://secure.test:${https}/hsts`);
    assert.is(page.url(), site('secure.test', '/hsts'));
    assert.is(await page.textContent('#path'), '/hsts');
  } finally {
    await context.close();
  }
});

test('custom-http-errors with default-backend: the browser shows the error page with the upstream status [browser, HTTP/2]', async () => {
  const { context, page } = await freshPage();
  try {
    const r = await page.goto(site('errors.test', '/__status/404'));
    assert.is(r?.status(), 404);
    assert.is(await page.textContent('#title'), 'Custom error page');
    assert.is(await page.textContent('#code'), '404');
    assert.is(await page.textContent('#uri'), '/__status/404');
    assert.is(await navigationProtocol(page), 'h2');

    const other = await page.goto(site('errors.test', '/__status/500'));
    assert.is(other?.status(), 500, 'a code not listed passes');
    assert.not.match((await page.textContent('body')) ?? '', 'Custom error page');
  } finally {
    await context.close();
  }
});

test.run();
