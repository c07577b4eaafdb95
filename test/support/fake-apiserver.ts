// An in-process Kubernetes API server for tests: list, watch, get, create, replace, patch and
// delete over real HTTP on 127.0.0.1, with controls to inject the failures a real cluster shows.
// Optionally as a cluster's is: HTTPS, bearer tokens checked, and the RBAC objects it holds enforced.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { authorize, forbiddenMessage, type RbacObjects } from './fake-rbac.js';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { freePort } from './ports.js';

/** One collection the server serves, e.g. `{group: 'networking.k8s.io', version: 'v1', resource: 'ingresses', kind: 'Ingress', namespaced: true}`. */
export interface ResourceType {
  group: string; // '' for the core group
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  /** Has a `/status` subresource: a plain update keeps status, a status update keeps the rest. */
  status?: boolean;
}

/** The resources registered by default; add more with `register()`. */
export const DEFAULT_RESOURCES: readonly ResourceType[] = [
  { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, status: true },
  { group: '', version: 'v1', resource: 'nodes', kind: 'Node', namespaced: false, status: true },
  { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true, status: true },
  { group: '', version: 'v1', resource: 'services', kind: 'Service', namespaced: true, status: true },
  { group: '', version: 'v1', resource: 'endpoints', kind: 'Endpoints', namespaced: true },
  { group: '', version: 'v1', resource: 'secrets', kind: 'Secret', namespaced: true },
  { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true },
  { group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true },
  { group: 'events.k8s.io', version: 'v1', resource: 'events', kind: 'Event', namespaced: true },
  { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices', kind: 'EndpointSlice', namespaced: true },
  { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses', kind: 'Ingress', namespaced: true, status: true },
  { group: 'networking.k8s.io', version: 'v1', resource: 'ingressclasses', kind: 'IngressClass', namespaced: false },
  { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true },
  { group: '', version: 'v1', resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', kind: 'Role', namespaced: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', kind: 'RoleBinding', namespaced: true },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles', kind: 'ClusterRole', namespaced: false },
  { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings', kind: 'ClusterRoleBinding', namespaced: false },
  { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false },
  { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', namespaced: true, status: true },
  { group: 'apps', version: 'v1', resource: 'daemonsets', kind: 'DaemonSet', namespaced: true, status: true },
  // The Gateway API's CRDs (standard channel), as a cluster that has them installed serves them.
  { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gatewayclasses', kind: 'GatewayClass', namespaced: false, status: true },
  { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways', kind: 'Gateway', namespaced: true, status: true },
  { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'httproutes', kind: 'HTTPRoute', namespaced: true, status: true },
  { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'listenersets', kind: 'ListenerSet', namespaced: true, status: true },
  { group: 'gateway.networking.k8s.io', version: 'v1beta1', resource: 'referencegrants', kind: 'ReferenceGrant', namespaced: true },
  { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'backendtlspolicies', kind: 'BackendTLSPolicy', namespaced: true, status: true },
];

/** A stored object: any JSON with `metadata.name`. */
export interface FakeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; [k: string]: unknown };
  [k: string]: unknown;
}

/** One request the server received, for assertions. */
export interface RecordedRequest {
  method: string;
  /** Kubernetes verb: list, watch, get, create, update, patch, delete, or `other`. */
  verb: string;
  path: string;
  query: Record<string, string>;
  /** The HTTP status answered; 0 while unanswered (see `hangNext`). */
  status: number;
  /** Who sent it, with `tokens`. */
  user?: string;
  at: number;
}

export interface FakeApiServerOptions {
  /** Close every watch after this long, as a real server does (default: never). */
  watchTimeoutMs?: number;
  /** Send BOOKMARK events this often to watches that allow them (default: never). */
  bookmarkIntervalMs?: number;
  /** How a watch from a compacted resourceVersion is refused: HTTP 410, or 200 with an in-stream ERROR 410. */
  goneMode?: 'http' | 'event';
  resources?: readonly ResourceType[];
  /** Serve HTTPS with this PEM certificate and key instead of HTTP. */
  tls?: { cert: string; key: string };
  /** Bearer token → user name: every request must carry one of them (else 401), as a cluster's. */
  tokens?: Record<string, string>;
  /**
   * Authorize each request of a user (from `tokens`) by the Roles, ClusterRoles and their
   * bindings this server holds, as the RBAC authorizer does: refused requests get 403.
   */
  rbac?: boolean;
}

type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

interface Change { rv: number; type: 'ADDED' | 'MODIFIED' | 'DELETED'; rt: ResourceType; old?: FakeObject; object: FakeObject }

interface OpenWatch {
  rt: ResourceType;
  namespace?: string;
  selector: Selector;
  fieldSelector: Selector;
  bookmarks: boolean;
  res: ServerResponse;
  timer?: NodeJS.Timeout;
}

interface Target { rt: ResourceType; namespace?: string; name?: string; subresource?: string }

class HttpError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string) { super(message); }
}

export class FakeApiServer {
  /** `http://127.0.0.1:<port>` (`https://` with `tls`) */
  readonly url: string;
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[] = [];
  /** How a watch from a compacted resourceVersion is refused; may be changed at any time. */
  goneMode: 'http' | 'event';
  /** Connections accepted so far (with `tls`: TLS handshakes completed). */
  connections = 0;

  private readonly types = new Map<string, ResourceType>(); // 'group/version/resource'
  private readonly objects = new Map<string, Map<string, FakeObject>>(); // type key → 'ns/name' → object
  private history: Change[] = [];
  private rv = 100;
  private compactedRv = 0;
  private readonly watches = new Set<OpenWatch>();
  private readonly sockets = new Set<Socket>();
  private failures: Array<{ status: number; match?: (r: { verb: string; path: string }) => boolean }> = [];
  private hangs: Array<{ match?: (r: { verb: string; path: string }) => boolean }> = [];
  private server?: Server;
  private bookmarkTimer?: NodeJS.Timeout;

  private constructor(readonly port: number, private readonly opts: FakeApiServerOptions) {
    this.url = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
    this.goneMode = opts.goneMode ?? 'http';
    for (const rt of opts.resources ?? DEFAULT_RESOURCES) this.register(rt);
  }

  /** Starts a server on a free loopback port. */
  static async start(opts: FakeApiServerOptions = {}): Promise<FakeApiServer> {
    const srv = new FakeApiServer(await freePort(), opts);
    await srv.start();
    return srv;
  }

  /** Serves another resource type. */
  register(rt: ResourceType): void {
    this.types.set(typeKey(rt), rt);
    if (!this.objects.has(typeKey(rt))) this.objects.set(typeKey(rt), new Map());
  }

  /** A KubeConfig whose current context points at this server (`skipTLSVerify` so http works). */
  kubeConfig(token = Object.keys(this.opts.tokens ?? {})[0] ?? 'fake-token'): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'fake', token }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
      currentContext: 'fake',
    });
    return kc;
  }

  /** The latest resourceVersion handed out. */
  get resourceVersion(): string {
    return String(this.rv);
  }

  // ---- objects, programmatically (each change reaches open watches as a real one would) ----

  /** Creates an object (kind and apiVersion pick the resource); throws if it exists. */
  create<T extends FakeObject>(obj: T): T & FakeObject {
    return this.doCreate(this.typeOf(obj), clone(obj)) as T;
  }

  /** Creates the object, or replaces it whatever its resourceVersion. */
  set<T extends FakeObject>(obj: T): T & FakeObject {
    const rt = this.typeOf(obj);
    const current = this.collection(rt).get(objKey(obj));
    if (!current) return this.doCreate(rt, clone(obj)) as T;
    const next = clone(obj);
    delete next.metadata.resourceVersion;
    return this.doReplace(rt, current, next, 'all') as T;
  }

  /** Replaces an existing object; a stale `metadata.resourceVersion` throws a 409 conflict. */
  update<T extends FakeObject>(obj: T): T & FakeObject {
    const rt = this.typeOf(obj);
    const current = this.collection(rt).get(objKey(obj));
    if (!current) throw new HttpError(404, 'NotFound', `${rt.resource} "${obj.metadata.name}" not found`);
    return this.doReplace(rt, current, clone(obj), 'all') as T;
  }

  /** Deletes an object; returns it, or undefined when it did not exist. */
  delete(apiVersion: string, kind: string, name: string, namespace?: string): FakeObject | undefined {
    const rt = this.typeByKind(apiVersion, kind);
    const current = this.collection(rt).get(namespace ? `${namespace}/${name}` : name);
    return current ? this.doDelete(rt, current) : undefined;
  }

  /** One object, or undefined. */
  get(apiVersion: string, kind: string, name: string, namespace?: string): FakeObject | undefined {
    const rt = this.typeByKind(apiVersion, kind);
    const o = this.collection(rt).get(namespace ? `${namespace}/${name}` : name);
    return o && clone(o);
  }

  /** Every object of a kind, optionally in one namespace. */
  list(apiVersion: string, kind: string, namespace?: string): FakeObject[] {
    const rt = this.typeByKind(apiVersion, kind);
    return [...this.collection(rt).values()].filter((o) => !namespace || o.metadata.namespace === namespace).map(clone);
  }

  // ---- failure injection ----

  /** Forgets the change history: a watch from any resourceVersion before now gets 410 Gone. */
  compact(): void {
    this.compactedRv = this.rv;
    this.history = [];
  }

  /** Sends an in-stream ERROR 410 (Expired) to every open watch and closes it. */
  expireWatches(): void {
    for (const w of [...this.watches]) {
      writeEvent(w.res, 'ERROR', goneStatus(this.compactedRv));
      this.endWatch(w);
    }
  }

  /** Destroys the socket of every open watch without a clean end (a dropped connection). */
  dropWatches(): void {
    for (const w of [...this.watches]) {
      this.watches.delete(w);
      clearTimeout(w.timer);
      w.res.socket?.destroy();
    }
  }

  /** Ends every open watch cleanly (as a server-side watch timeout does). */
  closeWatches(): void {
    for (const w of [...this.watches]) this.endWatch(w);
  }

  /** Sends a BOOKMARK with the current resourceVersion to every watch that allows bookmarks. */
  sendBookmarks(): void {
    for (const w of this.watches) {
      if (!w.bookmarks) continue;
      writeEvent(w.res, 'BOOKMARK', { kind: w.rt.kind, apiVersion: apiVersionOf(w.rt), metadata: { resourceVersion: String(this.rv) } });
    }
  }

  /** Writes a raw line to every open watch (to test how clients take malformed input). */
  sendRaw(line: string): void {
    for (const w of this.watches) if (!w.res.destroyed && !w.res.writableEnded) w.res.write(`${line}\n`);
  }

  /** The next `n` requests (those `match` accepts, if given) fail with `status`. */
  failNext(n: number, status = 500, match?: (r: { verb: string; path: string }) => boolean): void {
    for (let i = 0; i < n; i++) this.failures.push({ status, match });
  }

  /** The next `n` requests (those `match` accepts, if given) are never answered (until `stop()`). */
  hangNext(n: number, match?: (r: { verb: string; path: string }) => boolean): void {
    for (let i = 0; i < n; i++) this.hangs.push({ match });
  }

  /** Number of open watch connections. */
  get openWatches(): number {
    return this.watches.size;
  }

  /** Counts recorded requests, filtered by verb and/or a path substring or pattern. */
  count(filter: { verb?: string; path?: string | RegExp; since?: number } = {}): number {
    return this.requests.filter((r) =>
      (filter.verb === undefined || r.verb === filter.verb) &&
      (filter.since === undefined || r.at >= filter.since) &&
      (filter.path === undefined || (typeof filter.path === 'string' ? r.path.includes(filter.path) : filter.path.test(r.path))),
    ).length;
  }

  // ---- lifecycle ----

  /** Listens again (after `stop()`), on the same port. */
  async start(): Promise<void> {
    if (this.server) return;
    const handler = (req: IncomingMessage, res: ServerResponse) => this.handle(req, res);
    const server: Server = this.opts.tls ? createHttpsServer({ cert: this.opts.tls.cert, key: this.opts.tls.key }, handler) : createServer(handler);
    server.on(this.opts.tls ? 'secureConnection' : 'connection', (s: Socket) => {
      this.connections++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    if (this.opts.bookmarkIntervalMs) this.bookmarkTimer = setInterval(() => this.sendBookmarks(), this.opts.bookmarkIntervalMs);
  }

  /** Stops listening and destroys every connection: clients see refused connections until `start()`. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    clearInterval(this.bookmarkTimer);
    for (const w of this.watches) clearTimeout(w.timer);
    this.watches.clear();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await closed;
  }

  /** Same as `stop()`; for teardown. */
  close(): Promise<void> {
    return this.stop();
  }

  // ---- HTTP ----

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.url);
    const query = Object.fromEntries(url.searchParams);
    const method = req.method ?? 'GET';
    const record: RecordedRequest = { method, verb: 'other', path: url.pathname, query, status: 200, at: Date.now() };
    this.requests.push(record);
    const reply = (status: number, body: unknown) => {
      record.status = status;
      if (res.headersSent || res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => { body += c; });
    req.on('end', () => {
      try {
        if (this.opts.tokens) {
          const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
          record.user = token === undefined ? undefined : this.opts.tokens[token];
          if (record.user === undefined) return reply(401, statusObject(401, 'Unauthorized', 'Unauthorized'));
        }
        if (url.pathname === '/version') return reply(200, { major: '1', minor: '30', gitVersion: 'v1.30.0-fake' });
        if (url.pathname === '/healthz' || url.pathname === '/readyz') return reply(200, 'ok');
        const target = this.parsePath(url.pathname);
        const watch = query.watch === 'true' || query.watch === '1';
        record.verb = verbOf(method, target, watch);
        if (this.opts.rbac) {
          const request = {
            verb: record.verb, group: target.rt.group, namespace: target.rt.namespaced ? target.namespace : undefined, name: target.name,
            resource: target.subresource ? `${target.rt.resource}/${target.subresource}` : target.rt.resource,
          };
          if (!authorize(this.rbacObjects(), record.user ?? 'system:anonymous', request)) {
            throw new HttpError(403, 'Forbidden', forbiddenMessage(record.user ?? 'system:anonymous', request));
          }
        }
        const failIdx = this.failures.findIndex((f) => !f.match || f.match({ verb: record.verb, path: url.pathname }));
        if (failIdx >= 0) {
          const [f] = this.failures.splice(failIdx, 1);
          throw new HttpError(f.status, 'InternalError', `injected failure ${f.status}`);
        }
        const hangIdx = this.hangs.findIndex((h) => !h.match || h.match({ verb: record.verb, path: url.pathname }));
        if (hangIdx >= 0) {
          this.hangs.splice(hangIdx, 1);
          record.status = 0;
          return;
        }
        if (watch) {
          record.status = this.startWatch(target, query, res);
          return;
        }
        const [status, out] = this.serve(method, target, query, body, req.headers['content-type'] ?? '');
        reply(status, out);
      } catch (err) {
        const e = err instanceof HttpError ? err : new HttpError(500, 'InternalError', String(err));
        reply(e.code, statusObject(e.code, e.reason, e.message));
      }
    });
  }

  private rbacObjects(): RbacObjects {
    const all = (kind: string) => this.list('rbac.authorization.k8s.io/v1', kind) as never[];
    return { roles: all('Role'), clusterRoles: all('ClusterRole'), roleBindings: all('RoleBinding'), clusterRoleBindings: all('ClusterRoleBinding') };
  }

  private serve(method: string, t: Target, query: Record<string, string>, body: string, contentType: string): [number, unknown] {
    if (t.subresource && !(t.subresource === 'status' && t.rt.status)) {
      throw new HttpError(404, 'NotFound', `${t.rt.resource} has no subresource ${t.subresource}`);
    }
    const coll = this.collection(t.rt);
    const key = (name: string) => (t.rt.namespaced ? `${t.namespace}/${name}` : name);
    const existing = (name: string) => {
      const o = coll.get(key(name));
      if (!o) throw new HttpError(404, 'NotFound', `${t.rt.resource} "${name}" not found`);
      return o;
    };
    const parse = (): FakeObject => {
      try {
        return JSON.parse(body) as FakeObject;
      } catch {
        throw new HttpError(400, 'BadRequest', 'request body is not JSON');
      }
    };
    switch (method) {
      case 'GET': {
        if (t.name) return [200, existing(t.name)];
        const selector = parseSelector(query.labelSelector ?? '');
        const fields = parseSelector(query.fieldSelector ?? '');
        const items = [...coll.values()]
          .filter((o) => inScope(o, t.namespace) && selector(o.metadata.labels ?? {}) && fields(fieldsOf(o)))
          .sort((a, b) => objKey(a).localeCompare(objKey(b)))
          .map(({ kind: _k, apiVersion: _a, ...rest }) => rest); // list items carry no kind/apiVersion, as from a real server
        return [200, { kind: `${t.rt.kind}List`, apiVersion: apiVersionOf(t.rt), metadata: { resourceVersion: String(this.rv) }, items }];
      }
      case 'POST': {
        if (t.name) throw new HttpError(405, 'MethodNotAllowed', 'POST to a named object');
        const obj = parse();
        if (t.rt.namespaced) obj.metadata = { ...obj.metadata, namespace: t.namespace };
        return [201, this.doCreate(t.rt, obj)];
      }
      case 'PUT': {
        if (!t.name) throw new HttpError(405, 'MethodNotAllowed', 'PUT to a collection');
        const obj = parse();
        if (obj.metadata?.name !== t.name) throw new HttpError(400, 'BadRequest', 'the name in the body does not match the URL');
        if (t.rt.namespaced) obj.metadata.namespace = t.namespace;
        return [200, this.doReplace(t.rt, existing(t.name), obj, t.subresource === 'status' ? 'status' : 'main')];
      }
      case 'PATCH': {
        if (!t.name) throw new HttpError(405, 'MethodNotAllowed', 'PATCH to a collection');
        const current = existing(t.name);
        let patched: FakeObject;
        if (contentType.startsWith('application/json-patch+json')) patched = jsonPatch(clone(current), JSON.parse(body) as JsonPatchOp[]);
        else if (contentType.startsWith('application/merge-patch+json') || contentType.startsWith('application/strategic-merge-patch+json')) {
          patched = mergePatch(clone(current), parse()) as FakeObject;
        } else throw new HttpError(415, 'UnsupportedMediaType', `unsupported patch type ${contentType}`);
        if (patched.metadata.resourceVersion === current.metadata.resourceVersion) delete patched.metadata.resourceVersion;
        return [200, this.doReplace(t.rt, current, patched, t.subresource === 'status' ? 'status' : 'main')];
      }
      case 'DELETE': {
        if (!t.name) throw new HttpError(405, 'MethodNotAllowed', 'DELETE of a collection');
        return [200, this.doDelete(t.rt, existing(t.name))];
      }
      default:
        throw new HttpError(405, 'MethodNotAllowed', `method ${method}`);
    }
  }

  private startWatch(t: Target, query: Record<string, string>, res: ServerResponse): number {
    const fromRv = query.resourceVersion ?? '';
    if (fromRv !== '' && fromRv !== '0' && Number(fromRv) < this.compactedRv) {
      if (this.goneMode === 'http') {
        res.writeHead(410, { 'content-type': 'application/json' });
        res.end(JSON.stringify(goneStatus(this.compactedRv)));
        return 410;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      writeEvent(res, 'ERROR', goneStatus(this.compactedRv));
      res.end();
      return 200;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const w: OpenWatch = {
      rt: t.rt,
      namespace: t.namespace,
      selector: parseSelector(query.labelSelector ?? ''),
      fieldSelector: parseSelector(query.fieldSelector ?? ''),
      bookmarks: query.allowWatchBookmarks === 'true',
      res,
    };
    if (fromRv === '' || fromRv === '0') {
      for (const o of this.collection(t.rt).values()) if (this.matches(w, o)) writeEvent(res, 'ADDED', o);
    } else {
      for (const c of this.history) if (c.rv > Number(fromRv)) this.deliver(w, c);
    }
    const timeoutMs = query.timeoutSeconds ? Number(query.timeoutSeconds) * 1000 : this.opts.watchTimeoutMs;
    if (timeoutMs) w.timer = setTimeout(() => this.endWatch(w), timeoutMs);
    this.watches.add(w);
    res.on('close', () => {
      clearTimeout(w.timer);
      this.watches.delete(w);
    });
    return 200;
  }

  private endWatch(w: OpenWatch): void {
    clearTimeout(w.timer);
    this.watches.delete(w);
    w.res.end();
  }

  private matches(w: OpenWatch, o: FakeObject): boolean {
    return inScope(o, w.namespace) && w.selector(o.metadata.labels ?? {}) && w.fieldSelector(fieldsOf(o));
  }

  /** Sends one change to one watch, translating label-selector transitions as a real server does. */
  private deliver(w: OpenWatch, c: Change): void {
    if (typeKey(w.rt) !== typeKey(c.rt)) return;
    const now = this.matches(w, c.object);
    const before = c.old ? this.matches(w, c.old) : false;
    if (c.type === 'DELETED') {
      if (now) writeEvent(w.res, 'DELETED', c.object);
    } else if (now && before) writeEvent(w.res, 'MODIFIED', c.object);
    else if (now) writeEvent(w.res, 'ADDED', c.object);
    else if (before) writeEvent(w.res, 'DELETED', c.object);
  }

  private record(c: Change): void {
    this.history.push(c);
    for (const w of this.watches) this.deliver(w, c);
  }

  private doCreate(rt: ResourceType, obj: FakeObject): FakeObject {
    const meta = obj.metadata ?? ({} as FakeObject['metadata']);
    if (!meta.name && typeof meta.generateName === 'string') meta.name = `${meta.generateName}${randomUUID().slice(0, 5)}`;
    if (!meta.name) throw new HttpError(422, 'Invalid', 'metadata.name is required');
    if (rt.namespaced && !meta.namespace) meta.namespace = 'default';
    if (!rt.namespaced) delete meta.namespace;
    const coll = this.collection(rt);
    const key = objKey({ metadata: meta });
    if (coll.has(key)) throw new HttpError(409, 'AlreadyExists', `${rt.resource} "${meta.name}" already exists`);
    const stored: FakeObject = {
      ...obj,
      apiVersion: apiVersionOf(rt),
      kind: rt.kind,
      metadata: {
        ...meta,
        uid: randomUUID(),
        resourceVersion: String(++this.rv),
        creationTimestamp: (meta.creationTimestamp as string | undefined) ?? rfc3339(new Date()),
        ...(obj.spec !== undefined ? { generation: 1 } : {}),
      },
    };
    coll.set(key, stored);
    this.record({ rv: this.rv, type: 'ADDED', rt, object: stored });
    return clone(stored);
  }

  private doReplace(rt: ResourceType, current: FakeObject, next: FakeObject, part: 'main' | 'status' | 'all'): FakeObject {
    const sent = next.metadata?.resourceVersion;
    if (sent && sent !== current.metadata.resourceVersion) {
      throw new HttpError(409, 'Conflict', `Operation cannot be fulfilled on ${rt.resource} "${current.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`);
    }
    let merged: FakeObject;
    if (part === 'status' && rt.status) merged = { ...current, status: next.status };
    else if (part === 'main' && rt.status) merged = { ...next, status: current.status };
    else merged = next;
    if (merged.status === undefined) delete merged.status;
    const generation = current.metadata.generation as number | undefined;
    const specChanged = JSON.stringify(merged.spec) !== JSON.stringify(current.spec);
    const stored: FakeObject = {
      ...merged,
      apiVersion: apiVersionOf(rt),
      kind: rt.kind,
      metadata: {
        ...(part === 'status' ? current.metadata : merged.metadata),
        name: current.metadata.name,
        ...(current.metadata.namespace ? { namespace: current.metadata.namespace } : {}),
        uid: current.metadata.uid,
        creationTimestamp: current.metadata.creationTimestamp,
        resourceVersion: String(++this.rv),
        ...(generation !== undefined ? { generation: specChanged ? generation + 1 : generation } : {}),
      },
    };
    this.collection(rt).set(objKey(stored), stored);
    this.record({ rv: this.rv, type: 'MODIFIED', rt, old: current, object: stored });
    return clone(stored);
  }

  private doDelete(rt: ResourceType, current: FakeObject): FakeObject {
    this.collection(rt).delete(objKey(current));
    const gone: FakeObject = { ...current, metadata: { ...current.metadata, resourceVersion: String(++this.rv) } };
    this.record({ rv: this.rv, type: 'DELETED', rt, old: current, object: gone });
    return clone(gone);
  }

  private collection(rt: ResourceType): Map<string, FakeObject> {
    const c = this.objects.get(typeKey(rt));
    if (!c) throw new HttpError(404, 'NotFound', `resource ${typeKey(rt)} not served`);
    return c;
  }

  private typeOf(obj: FakeObject): ResourceType {
    if (!obj.apiVersion || !obj.kind) throw new Error('object needs apiVersion and kind');
    return this.typeByKind(obj.apiVersion, obj.kind);
  }

  private typeByKind(apiVersion: string, kind: string): ResourceType {
    for (const rt of this.types.values()) if (apiVersionOf(rt) === apiVersion && rt.kind === kind) return rt;
    throw new Error(`no resource registered for ${apiVersion} ${kind}`);
  }

  /** `/api/v1[/namespaces/{ns}]/{resource}[/{name}[/{sub}]]` or `/apis/{group}/{version}/...` */
  private parsePath(pathname: string): Target {
    const segs = pathname.split('/').filter(Boolean).map(decodeURIComponent);
    let group: string;
    let version: string;
    let rest: string[];
    if (segs[0] === 'api' && segs.length >= 2) [group, version, rest] = ['', segs[1], segs.slice(2)];
    else if (segs[0] === 'apis' && segs.length >= 3) [group, version, rest] = [segs[1], segs[2], segs.slice(3)];
    else throw new HttpError(404, 'NotFound', `no route for ${pathname}`);
    const lookup = (resource: string) => this.types.get(`${group}/${version}/${resource}`);
    if (rest[0] === 'namespaces' && rest.length >= 3 && lookup(rest[2])?.namespaced) {
      return { rt: lookup(rest[2])!, namespace: rest[1], name: rest[3], subresource: rest[4] };
    }
    const rt = rest[0] ? lookup(rest[0]) : undefined;
    if (!rt) throw new HttpError(404, 'NotFound', `the server could not find the requested resource (${pathname})`);
    return { rt, name: rest[1], subresource: rest[2] };
  }
}

/** Starts a fake API server (shorthand for `FakeApiServer.start`). */
export function startFakeApiServer(opts?: FakeApiServerOptions): Promise<FakeApiServer> {
  return FakeApiServer.start(opts);
}

// ---- helpers ----

type Selector = (labels: Record<string, string>) => boolean;

/** Label (and simple field) selectors: `a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`, `a notin (x,y)`. */
export function parseSelector(sel: string): Selector {
  const terms = sel.match(/[^,(]+(\([^)]*\))?/g)?.map((s) => s.trim()).filter(Boolean) ?? [];
  const tests = terms.map((term): Selector => {
    let m = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
    if (m) {
      const [, k, op, vs] = m;
      const set = new Set(vs.split(',').map((v) => v.trim()));
      return op === 'in' ? (l) => k in l && set.has(l[k]) : (l) => !(k in l) || !set.has(l[k]);
    }
    m = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
    if (m) {
      const [, k, op, v] = m;
      return op === '!=' ? (l) => l[k] !== v : (l) => l[k] === v;
    }
    if (term.startsWith('!')) return (l) => !(term.slice(1) in l);
    return (l) => term in l;
  });
  return (labels) => tests.every((t) => t(labels));
}

/** The fields a field selector can test: name, namespace, and a top-level `type` (Secrets, Events). */
function fieldsOf(o: FakeObject): Record<string, string> {
  return {
    'metadata.name': o.metadata.name,
    'metadata.namespace': o.metadata.namespace ?? '',
    ...(typeof o.type === 'string' ? { type: o.type } : {}),
  };
}

function inScope(o: FakeObject, namespace: string | undefined): boolean {
  return !namespace || o.metadata.namespace === namespace;
}

function verbOf(method: string, t: Target, watch: boolean): string {
  switch (method) {
    case 'GET': return watch ? 'watch' : t.name ? 'get' : 'list';
    case 'POST': return 'create';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    case 'DELETE': return 'delete';
    default: return 'other';
  }
}

function typeKey(rt: { group: string; version: string; resource: string }): string {
  return `${rt.group}/${rt.version}/${rt.resource}`;
}

function apiVersionOf(rt: ResourceType): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version;
}

function objKey(o: { metadata: { name: string; namespace?: string } }): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

function writeEvent(res: ServerResponse, type: WatchEventType, object: unknown): void {
  if (!res.destroyed && !res.writableEnded) res.write(`${JSON.stringify({ type, object })}\n`);
}

function statusObject(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function goneStatus(compactedRv: number) {
  return statusObject(410, 'Expired', `too old resource version (compacted at ${compactedRv})`);
}

function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function clone<T>(o: T): T {
  return structuredClone(o);
}

/** RFC 7386 JSON merge patch. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

interface JsonPatchOp { op: 'add' | 'remove' | 'replace' | 'test'; path: string; value?: unknown }

/** RFC 6902 JSON patch (add, remove, replace, test). */
function jsonPatch(doc: FakeObject, ops: JsonPatchOp[]): FakeObject {
  for (const op of ops) {
    const parts = op.path.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = parts.pop();
    if (last === undefined) throw new HttpError(422, 'Invalid', `bad patch path ${op.path}`);
    let parent: any = doc;
    for (const p of parts) {
      if (parent?.[p] === undefined) throw new HttpError(422, 'Invalid', `patch path ${op.path} does not exist`);
      parent = parent[p];
    }
    const isArr = Array.isArray(parent);
    const idx = last === '-' ? parent.length : Number(last);
    switch (op.op) {
      case 'add':
        if (isArr) parent.splice(idx, 0, op.value);
        else parent[last] = op.value;
        break;
      case 'replace':
        if (!(isArr ? idx < parent.length : last in parent)) throw new HttpError(422, 'Invalid', `patch path ${op.path} does not exist`);
        if (isArr) parent[idx] = op.value;
        else parent[last] = op.value;
        break;
      case 'remove':
        if (isArr) parent.splice(idx, 1);
        else delete parent[last];
        break;
      case 'test':
        if (JSON.stringify(parent[isArr ? idx : last]) !== JSON.stringify(op.value)) throw new HttpError(422, 'Invalid', `test failed at ${op.path}`);
        break;
    }
  }
  return doc;
}
