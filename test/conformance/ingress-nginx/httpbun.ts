// A loopback stand-in for the httpbun Service ingress-nginx's e2e framework deploys
// (`WithHTTPBunEnabled`), with the endpoints its annotation tests call: `/basic-auth/<user>/<pass>`
// answers 200 to those Basic credentials and 401 to anything else; `/status/<code>` answers that
// status; `/cookies/set/<name>/<value>` answers 200 with that cookie set; `/error` answers 503
// (auth.go's NGINX with a cookie and an error location); `/` answers 200. Each request is recorded.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpBun {
  readonly address: string;
  readonly port: number;
  /** `host:port`, as an auth-url names it. */
  readonly authority: string;
  /** Each request, with the client port of the connection it came on (a kept-alive connection repeats it). */
  readonly requests: Array<{ method: string; url: string; headers: IncomingMessage['headers']; peerPort: number }>;
  close(): Promise<void>;
}

export async function startHttpBun(address: string): Promise<HttpBun> {
  const requests: HttpBun['requests'] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, peerPort: req.socket.remotePort ?? 0 });
    const basic = /^\/basic-auth\/([^/]+)\/([^/?]+)/.exec(req.url ?? '');
    if (basic) {
      const expected = `Basic ${Buffer.from(`${basic[1]}:${basic[2]}`).toString('base64')}`;
      const ok = req.headers.authorization === expected;
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json', ...(ok ? {} : { 'www-authenticate': 'Basic realm="httpbun"' }) });
      res.end(JSON.stringify({ authenticated: ok, user: basic[1] }));
      return;
    }
    const cookie = /^\/cookies\/set\/([^/]+)\/([^/?]+)/.exec(req.url ?? '');
    if (cookie) {
      res.writeHead(200, { 'set-cookie': `${cookie[1]}=${cookie[2]}`, 'content-type': 'text/plain' });
      res.end('OK\n');
      return;
    }
    const path = (req.url ?? '').split('?')[0];
    const status = /^\/status\/(\d{3})/.exec(path ?? '')?.[1] ?? (path === '/error' ? '503' : path === '/' ? '200' : '404');
    // No body, said so (an auth_request connection stays open only for an answer without one).
    res.writeHead(Number(status), { 'content-length': '0' });
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address, port, authority: `${address}:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
