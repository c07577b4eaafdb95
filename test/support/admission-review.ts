// An AdmissionReview for an Ingress (or another kind: `kind`) sent to a validating webhook over
// HTTPS, as the API server sends it (CREATE, no old object); resolves with the review's response.
import { request as httpsRequest } from 'node:https';

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
