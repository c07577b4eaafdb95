// The health and metrics server on --healthz-port: /healthz answers 200 only once the first
// configuration is applied and NGINX is up, 500 before that and while shutting down.
import { createServer, type Server } from 'node:http';

export interface HealthState {
  ready(): boolean;
  shuttingDown(): boolean;
}

/** What /metrics serves: a prom-client Registry, or several printed as one. */
export interface Exposition { contentType: string; metrics(): Promise<string> }

export function startHealthServer(opts: { host: string; port: number; state: HealthState; registry?: Exposition }): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      const ok = opts.state.ready() && !opts.state.shuttingDown();
      res.writeHead(ok ? 200 : 500, { 'content-type': 'text/plain' });
      res.end(ok ? 'ok' : opts.state.shuttingDown() ? 'shutting down' : 'not ready: initial configuration not applied yet');
      return;
    }
    if (path === '/metrics' && opts.registry) {
      opts.registry.metrics().then((text) => {
        res.writeHead(200, { 'content-type': opts.registry!.contentType });
        res.end(text);
      }, (err: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(err));
      });
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve(server));
  });
}
