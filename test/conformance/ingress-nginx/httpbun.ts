// A loopback stand-in for the httpbun Service ingress-nginx's e2e framework deploys
// (`WithHTTPBunEnabled`), with the endpoints its annotation tests call: `/basic-auth/<user>/<pass>`
// answers 200 to those Basic credentials and 401 to anything else; `/status/<code>` answers that
// status. Each request is recorded.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HttpBun {
  /** `host:port`, as an auth-url names it. */
  readonly authority: string;
  readonly requests: Array<{ method: string; url: string; headers: IncomingMessage['headers'] }>;
  close(): Promise<void>;
}

export async function startHttpBun(address: string): Promise<HttpBun> {
  const requests: HttpBun['requests'] = [];
  const server: Server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const basic = /^\/basic-auth\/([^/]+)\/([^/?]+)/.exec(req.url ?? '');
    if (basic) {
      const expected = `Basic ${Buffer.from(`${basic[1]}:${basic[2]}`).toString('base64')}`;
      const ok = req.headers.authorization === expected;
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json', ...(ok ? {} : { 'www-authenticate': 'Basic realm="httpbun"' }) });
      res.end(JSON.stringify({ authenticated: ok, user: basic[1] }));
      return;
    }
    const status = /^\/status\/(\d{3})/.exec(req.url ?? '');
    res.writeHead(status ? Number(status[1]) : 404);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    authority: `${address}:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
