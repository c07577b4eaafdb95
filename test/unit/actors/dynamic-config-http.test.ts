// The dynamic-config actor over real HTTP on a unix socket (node:http): no socket yet (refused),
// then a server that never answers (timeout, the request is aborted), then one that answers 201;
// every request carries the control token.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { asyncScheduler, firstValueFrom } from 'rxjs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDynamicConfigActor, controlRequestFn, waitForControl, type RequestFn } from '../../../src/actors/dynamic-config.js';
import { silentLogger } from '../../../src/log.js';
import type { Backend } from '../../../src/model/core/types.js';

const dir = mkdtempSync(join(tmpdir(), 'irx-dyn-'));
let n = 0;
/** A fresh socket path and a channel to it. */
const channel = () => ({ socketPath: join(dir, `control-${++n}.sock`), token: () => 'the-token' });

test('refused, then hung, then 201: the actor retries through both and succeeds', async () => {
  const control = channel();
  const seen: { method: string; url: string; body: string; authorization?: string; closedEarly: boolean }[] = [];
  let mode: 'hang' | 'answer' = 'hang';
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const entry = { method: req.method ?? '', url: req.url ?? '', body, authorization: req.headers.authorization, closedEarly: false };
      seen.push(entry);
      if (mode === 'hang') {
        res.on('close', () => { entry.closedEarly = !res.writableEnded; });
        mode = 'answer';
        return; // never answers
      }
      res.writeHead(201).end();
    });
  });
  let calls = 0;
  const viaSocket = controlRequestFn(control);
  const request: RequestFn = async (method, path, body, signal) => {
    calls += 1;
    if (calls === 2) await new Promise<void>((r) => server.listen(control.socketPath, () => r()));
    return viaSocket(method, path, body, signal);
  };
  try {
    const actor = createDynamicConfigActor({
      control, scheduler: asyncScheduler, logger: silentLogger(), request, timeoutMs: 300,
      backoff: { steps: 6, initialMs: 40, factor: 1, jitter: 0 },
    });
    const payload = [{ name: 'ns-svc-80', endpoints: [{ address: '10.0.0.1', port: '80' }] }];
    const result = await firstValueFrom(actor({ backends: payload as unknown as Backend[] }));
    assert.is(result.ok, true, result.error);
    assert.is(result.attempts, 3);
    assert.equal(result.posted, ['backends']);
    assert.ok(result.durationMs >= 300 + 80, `took ${result.durationMs} ms`);
    assert.is(seen.length, 2, 'the refused attempt never reached the server');
    assert.equal(seen.map((s) => [s.method, s.url, s.authorization]), [['POST', '/configuration/backends', 'Bearer the-token'], ['POST', '/configuration/backends', 'Bearer the-token']]);
    assert.equal(JSON.parse(seen[1].body).backends, payload, 'the whole list: nothing was accepted before');
    assert.ok(seen[0].closedEarly, 'the hung request was aborted by the client');
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

test('a missing socket with no recovery gives a failed result naming the cause', async () => {
  const actor = createDynamicConfigActor({
    control: channel(), scheduler: asyncScheduler, logger: silentLogger(), timeoutMs: 200,
    backoff: { steps: 3, initialMs: 10, factor: 1, jitter: 0 },
  });
  const result = await firstValueFrom(actor({ servers: { certificates: {}, servers: {} } }));
  assert.is(result.ok, false);
  assert.is(result.attempts, 3);
  assert.match(result.error!, /ENOENT/);
});

test('waitForControl resolves once a server listens, with no fixed sleep', async () => {
  const control = channel();
  const server = createServer((_req, res) => res.writeHead(404).end());
  setTimeout(() => server.listen(control.socketPath), 150);
  try {
    const t0 = Date.now();
    await firstValueFrom(waitForControl(control, { scheduler: asyncScheduler, timeoutMs: 3000, intervalMs: 20 }));
    const elapsed = Date.now() - t0;
    assert.ok(elapsed >= 140 && elapsed < 1000, `elapsed ${elapsed}`);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

test.run();
