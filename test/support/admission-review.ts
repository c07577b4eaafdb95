// An AdmissionReview for an Ingress (or another kind: `kind`) sent to a validating webhook over
// HTTPS, as the API server sends it (CREATE, no old object); resolves with the review's response.
import { request as httpsRequest, type Agent } from 'node:https';

export interface ReviewResponse { allowed: boolean; status?: { message: string }; warnings?: string[] }

export interface ReviewedKind { group: string; version: string; kind: string; resource: string }
const INGRESS: ReviewedKind = { group: 'networking.k8s.io', version: 'v1', kind: 'Ingress', resource: 'ingresses' };

export function admissionReview(opts: { port: number; ca: Buffer; namespace: string; object: unknown; uid?: string; kind?: ReviewedKind; operation?: string }): Promise<ReviewResponse> {
  const { group, version, kind, resource } = opts.kind ?? INGRESS;
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: {
      uid: opts.uid ?? 'e2e-1', kind: { group, version, kind },
      resource: { group, version, resource },
      name: (opts.object as { metadata: { name: string } }).metadata.name, namespace: opts.namespace, operation: opts.operation ?? 'CREATE',
      userInfo: { username: 'e2e' }, object: opts.object, oldObject: null, dryRun: false,
    },
  });
  return new Promise((resolve, reject) => {
    const req = httpsRequest({
      host: '127.0.0.1', port: opts.port, method: 'POST', path: `/${group}/${version}/${resource}`, agent: false,
      ca: opts.ca, servername: 'ingress.local', headers: { 'content-type': 'application/json' },
    }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => { text += d; });
      res.on('end', () => { try { resolve((JSON.parse(text) as { response: ReviewResponse }).response); } catch (err) { reject(new Error(`${res.statusCode} ${text}: ${String(err)}`)); } });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** What a webhook answered a POST: the status, the body, and the body parsed when it is JSON. */
export interface WebhookReply { status: number; text: string; json?: any }

/**
 * Sends `body` to the webhook on 127.0.0.1:`port` over HTTPS (trusting `ca`, the name
 * ingress.local), by default as a POST of JSON to the Ingress path, on a connection of its own
 * unless `agent`; rejects when the connection fails or `timeoutMs` passes without an answer.
 */
export function postToWebhook(port: number, body: string | Buffer, opts: {
  ca: Buffer; method?: string; headers?: Record<string, string>; agent?: Agent; localAddress?: string; timeoutMs?: number;
}): Promise<WebhookReply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({
      host: '127.0.0.1', port, method: opts.method ?? 'POST', path: '/networking/v1/ingresses', ca: opts.ca, servername: 'ingress.local',
      agent: opts.agent ?? false, localAddress: opts.localAddress, headers: { 'content-type': 'application/json', ...opts.headers },
      ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs } : {}),
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try { json = JSON.parse(text); } catch { json = undefined; }
        resolve({ status: res.statusCode ?? 0, text, json });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`the webhook did not answer within ${opts.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
