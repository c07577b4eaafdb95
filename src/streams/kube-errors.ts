// What an error from the Kubernetes API means to an operator. A 403 is the API server's RBAC
// refusing the controller's service account a verb on a resource: it is said in those words
// (the server's own message names user, verb, resource and scope), never taken for an empty answer.

/** The API server's message of a 403 (client-node's ApiException or our watch's error), or undefined. */
export function forbiddenMessage(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown; body?: unknown; message?: unknown };
  if (e.code !== 403 && e.statusCode !== 403) return undefined;
  let body = e.body;
  if (typeof body === 'string') {
    try { body = JSON.parse(body); } catch { /* not a Status */ }
  }
  const fromBody = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
  if (typeof fromBody === 'string' && fromBody !== '') return fromBody;
  return typeof e.message === 'string' ? e.message.replace(/^403: /, '') : 'forbidden';
}

/** One line for the log: the refusal and what to do, or undefined when `err` is no 403. */
export function describeForbidden(err: unknown, what: string): string | undefined {
  const message = forbiddenMessage(err);
  if (message === undefined) return undefined;
  return `the API server forbids ${what}: ${message}. Grant it to the controller's service account ` +
    '(the ClusterRole and Role of ingress-nginx\'s manifests do; see docs/controller.md, Permissions)';
}
