#!/usr/bin/env node
// The quickstart's upstreams: small HTTP servers that answer with who they are and what they
// received. Ports and addresses match the EndpointSlices in services.yaml.
import { createServer } from 'node:http';

const BACKENDS = [
  { name: 'web-1', host: '127.0.0.1', port: 9101 },
  { name: 'web-2', host: '127.0.0.2', port: 9102 },
  { name: 'api', host: '127.0.0.1', port: 9103 },
  { name: 'web-canary', host: '127.0.0.1', port: 9104 },
];

for (const b of BACKENDS) {
  createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`${JSON.stringify({ backend: b.name, method: req.method, path: req.url, host: req.headers.host })}\n`);
  }).listen(b.port, b.host).on('error', (err) => {
    process.stderr.write(`echo backend ${b.name}: ${err.message}\n`);
    process.exit(1);
  });
}
process.stderr.write(`echo backends: ${BACKENDS.map((b) => `${b.name}@${b.host}:${b.port}`).join(' ')}\n`);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(0));
