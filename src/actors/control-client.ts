// HTTP to NGINX's control server: over its unix socket, with the controller's token. Everything
// that talks to the control server (dynamic configuration, reload checks, dbg) goes through here.
import { request } from 'node:http';
import type { ControlChannel } from '../render/control.js';

export interface ControlResponse {
  status: number;
  body: string;
}

/** A request body: a string, or chunks sent one after another (the backends list, unjoined). */
export type ControlBody = string | readonly string[];

export interface ControlRequestOptions {
  body?: ControlBody;
  signal?: AbortSignal;
  /** Gives up (error) when no answer came in this time; none by default. */
  timeoutMs?: number;
  /** Sends no token: for probes that only ask whether a worker answers. */
  anonymous?: boolean;
}

/** Where a channel is, for messages. */
export function describeChannel(channel: ControlChannel): string {
  return `unix:${channel.socketPath}`;
}

export function controlRequest(channel: ControlChannel, method: string, path: string, opts: ControlRequestOptions = {}): Promise<ControlResponse> {
  return new Promise((resolve, reject) => {
    const chunks = opts.body === undefined ? [] : typeof opts.body === 'string' ? [opts.body] : opts.body;
    let length = 0;
    for (const c of chunks) length += Buffer.byteLength(c);
    let token: string | undefined;
    try {
      if (!opts.anonymous) token = channel.token();
    } catch (err) {
      reject(new Error(`cannot read the control token: ${(err as Error).message}`));
      return;
    }
    const headers: Record<string, string | number> = { host: 'control' };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    if (opts.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = length;
    }
    const req = request({ socketPath: channel.socketPath, path, method, signal: opts.signal, agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    if (opts.timeoutMs !== undefined) {
      req.setTimeout(opts.timeoutMs, () => req.destroy(new Error(`${describeChannel(channel)}${path}: no answer within ${opts.timeoutMs} ms`)));
    }
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}
