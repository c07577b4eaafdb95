// The "changes under load" scenario (issue 29), shared by test/e2e/changes-under-load.test.ts
// and bench/changes-under-load.ts: 20 loaded hosts (five of them TLS with one wildcard
// certificate), and a list of manifest writes that change everything around them without a
// reload — other Ingresses added, changed and deleted, a path moving between two Ingresses of a
// loaded host, the certificate rotating, a Service's endpoints churning (the new endpoint added
// not ready, then ready, and only then the old one dropped) — and one change that needs a
// reload (a new host with `proxy-body-size`, which only a server block can apply).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingress, service, tlsSecret } from './local-harness.js';

export const DOMAIN = 'under-load.example';
export const LOADED_HOSTS = 20;
/** Hosts 0–4 have TLS with the `wildcard` Secret; the others get NGINX's default certificate. */
export const TLS_HOSTS = 5;
export const MOVING_PATH = '/moved';
export const RELOAD_HOST = `static.${DOMAIN}`;

/** TLS hosts keep serving plain HTTP: the HTTP/1.1 clients send plain HTTP to every host. */
const NO_REDIRECT = { 'nginx.ingress.kubernetes.io/ssl-redirect': 'false' };

/** Class `nginx`: beside a generated cluster (bench/gen.ts) that has that IngressClass, a class-less Ingress would be ignored. */
const ing = (name: string, o: Parameters<typeof ingress>[2]) => ingress('default', name, { className: 'nginx', ...o });

export const hostOf = (i: number) => `h${i}.${DOMAIN}`;
export const otherHostOf = (i: number) => `other${i}.${DOMAIN}`;

export interface Endpoint { address: string; port: number }

/** A manifest file written (`items`) or removed (`null`), and what the change is. */
export interface Write { file: string; items: object[] | null; what: string }

export interface Target { host: string; path: string }

/** Every (host, path) the load cycles through: `/` of the 20 hosts and the path that moves. */
export function targets(): Target[] {
  return [...Array.from({ length: LOADED_HOSTS }, (_, i) => ({ host: hostOf(i), path: '/' })), { host: hostOf(0), path: MOVING_PATH }];
}

/** A wildcard certificate for *.DOMAIN with `cn`, made by the openssl CLI. */
export function wildcardCertificate(cn: string): { cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'irx-under-load-cert-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', join(dir, 'k'), '-out', join(dir, 'c'), '-days', '2', '-subj', `/CN=${cn}`,
      '-addext', `subjectAltName=DNS:*.${DOMAIN}`], { stdio: 'pipe' });
    return { cert: readFileSync(join(dir, 'c'), 'utf8'), key: readFileSync(join(dir, 'k'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One EndpointSlice per endpoint (each may have its own port), `ready` per endpoint. */
function slices(svc: string, eps: Array<Endpoint & { ready: boolean; slot: number }>): object[] {
  return eps.map((e) => ({
    apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: 'IPv4',
    metadata: { name: `${svc}-${e.slot}`, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
    ports: [{ name: 'http', port: e.port, protocol: 'TCP' }],
    endpoints: [{ addresses: [e.address], conditions: { ready: e.ready } }],
  }));
}

/** A group of changes, and what the cluster serves once the controller has applied them all. */
export interface ChangeGroup {
  writes: Write[];
  /** Requests and the status each must get (`backend`: the Service whose endpoint answers). */
  expect: Array<{ host: string; path: string; status: number; backend?: 'web' | 'churn' }>;
  /** The certificate's CN served to the TLS hosts. */
  cn: string;
  /** The endpoints of `churn` NGINX balances over at the end (indexes into `churn`; one not ready is not among them). */
  churnReady: number[];
}

export interface Scenario {
  /** The manifests before the controller starts. */
  initial: Write[];
  /** The changes without a reload, in groups. */
  groups: ChangeGroup[];
  /** The one change that needs a reload, and the host it adds. */
  reload: Write;
}

/**
 * `web` (the loaded hosts' Service) has the `web` endpoints; `churn` (hosts 10–19 and the moving
 * path's second Ingress) starts on `churn[0]` and walks through the others (three or more).
 * The certificates' CNs are `first` and `rotated`.
 */
export function scenario(opts: { web: Endpoint[]; churn: Endpoint[]; certs: { first: { cert: string; key: string }; rotated: { cert: string; key: string } }; others?: number }): Scenario {
  const others = opts.others ?? 4;
  const serviceOf = (i: number) => (i >= 10 ? 'churn' : 'web');
  const loaded = (i: number) => ing(`h${i}`, {
    host: hostOf(i), paths: [{ path: '/', service: serviceOf(i) }],
    ...(i < TLS_HOSTS ? { tls: [{ hosts: [hostOf(i)], secretName: 'wildcard' }], annotations: NO_REDIRECT } : {}),
  });
  // The moving path: in Ingress `moving-a` (Service web) or `moving-b` (Service churn), both on host 0.
  const moving = (inA: boolean): Write => ({
    file: 'moving.json', what: `${MOVING_PATH} moves to Ingress moving-${inA ? 'a' : 'b'}`,
    items: [
      ing('moving-a', { host: hostOf(0), paths: [{ path: inA ? MOVING_PATH : '/a-only', service: 'web' }], annotations: NO_REDIRECT }),
      ing('moving-b', { host: hostOf(0), paths: [{ path: inA ? '/b-only' : MOVING_PATH, service: 'churn' }], annotations: NO_REDIRECT }),
    ],
  });
  const churnAt = (step: number): Write => {
    // step 3k: churn[k] alone; 3k+1: churn[k+1] added, not ready; 3k+2: ready too; 3k+3: churn[k+1] alone.
    const k = Math.floor(step / 3) % opts.churn.length;
    const next = (k + 1) % opts.churn.length;
    const phase = step % 3;
    const eps = phase === 0 ? [{ ...opts.churn[k]!, ready: true, slot: k }]
      : [{ ...opts.churn[k]!, ready: true, slot: k }, { ...opts.churn[next]!, ready: phase === 2, slot: next }];
    return { file: 'churn-endpoints.json', items: slices('churn', eps), what: `churn endpoints: ${['one', 'new one not ready', 'new one ready'][phase]}` };
  };
  const other = (i: number, changed: boolean): Write => ({
    file: `other${i}.json`, what: `Ingress other${i} ${changed ? 'changed' : 'added'}`,
    items: [ing(`other${i}`, { host: otherHostOf(i), paths: [{ path: changed ? '/v2' : '/v1', service: changed ? 'churn' : 'web' }] })],
  });
  const secret = (rotated: boolean): Write => ({
    file: 'wildcard.json', what: `certificate ${rotated ? 'rotated' : 'first'}`,
    items: [tlsSecret('default', 'wildcard', opts.certs[rotated ? 'rotated' : 'first'].cert, opts.certs[rotated ? 'rotated' : 'first'].key)],
  });
  const range = Array.from({ length: others }, (_, i) => i);

  const initial: Write[] = [
    { file: 'services.json', what: 'Services', items: [service('default', 'web'), service('default', 'churn'), ...slices('web', opts.web.map((e, slot) => ({ ...e, ready: true, slot })))] },
    churnAt(0),
    secret(false),
    { file: 'loaded.json', what: 'the 20 loaded hosts', items: Array.from({ length: LOADED_HOSTS }, (_, i) => loaded(i)) },
    moving(true),
  ];
  const groups: ChangeGroup[] = [
    {
      writes: [...range.map((i) => other(i, false)), churnAt(1), moving(false), churnAt(2)],
      expect: [...range.map((i) => ({ host: otherHostOf(i), path: '/v1', status: 200 })), { host: hostOf(0), path: MOVING_PATH, status: 200, backend: 'churn' }],
      cn: 'first', churnReady: [0, 1],
    },
    {
      writes: [churnAt(3), ...range.map((i) => other(i, true)), secret(true), churnAt(4)],
      expect: range.flatMap((i) => [{ host: otherHostOf(i), path: '/v2', status: 200 }, { host: otherHostOf(i), path: '/v1', status: 404 }]),
      cn: 'rotated', churnReady: [1],
    },
    {
      writes: [...range.map((i) => ({ file: `other${i}.json`, items: null, what: `Ingress other${i} deleted` })), churnAt(5), moving(true), churnAt(6)],
      expect: [...range.map((i) => ({ host: otherHostOf(i), path: '/v2', status: 404 })), { host: hostOf(0), path: MOVING_PATH, status: 200, backend: 'web' }],
      cn: 'rotated', churnReady: [2],
    },
  ];
  const reload: Write = {
    file: 'static.json', what: 'a new host with proxy-body-size (a server block: reload)',
    items: [ing('static', { host: RELOAD_HOST, paths: [{ path: '/', service: 'web' }], annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '8m' } })],
  };
  return { initial, groups, reload };
}
