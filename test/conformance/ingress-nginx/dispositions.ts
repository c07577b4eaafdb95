// The Its of ingress-nginx's e2e suite that have no ported test, each with the reason. A
// deliberate difference names the heading of docs/differences.md that explains it (and the
// webhook and `lint` warn about it); "not applicable" says why the behaviour cannot apply to
// ingress-rx. Keys are catalogue ids (`<file>:<line>`).

export type Disposition =
  | { kind: 'differs on purpose'; why: string; differences: string }
  | { kind: 'not applicable'; why: string };

const BLOCKLIST_REJECTS_THE_ANNOTATION: Disposition = {
  kind: 'differs on purpose',
  why: 'a blocklisted word rejects that annotation (named in a warning; the webhook and lint refuse the Ingress), not the whole Ingress: the host answers from its Ingress without the snippet, not 404',
  differences: 'Annotations and ConfigMap parsing',
};

export const DISPOSITIONS: Readonly<Record<string, Disposition>> = {
  'nginx/nginx.go:102': {
    kind: 'not applicable',
    why: 'runs the ingress-nginx image\'s NGINX binary without the controller, on a configuration of its own; ingress-rx runs Debian\'s nginx with its Lua module, which every conformance test starts and serves through',
  },
  'nginx/nginx.go:114': {
    kind: 'not applicable',
    why: 'checks that the ingress-nginx image\'s NGINX, patched without alias and root, refuses a configuration using alias; ingress-rx runs Debian\'s NGINX, whose configuration gets alias only from its own template, and refuses alias and root in every snippet (test/unit/model/snippet-check.test.ts)',
  },
  'nginx/nginx.go:121': {
    kind: 'not applicable',
    why: 'checks that the ingress-nginx image\'s NGINX, patched without alias and root, refuses a configuration using root; ingress-rx\'s template uses no root, and every snippet with alias or root is refused (test/unit/model/snippet-check.test.ts)',
  },
  'admission/admission.go:133': {
    kind: 'differs on purpose', differences: 'Model',
    why: 'a path holding /etc/nginx (or another of ingress-nginx\'s deep-inspection words) is served, escaped and never a file path; the webhook allows it with the warning deep-inspection, and lint reports it',
  },
  'settings/ssl_passthrough.go:78': {
    kind: 'differs on purpose', differences: 'NGINX configuration',
    why: 'the host without ssl-passthrough proxies plain HTTP, as its backend-protocol says, to the Service the passthrough host uses, whose TLS-only backend refuses it (502); ingress-nginx silently proxies HTTPS to any Service a passthrough host uses (template.go), and its e2e expects 404 there (not traced: its httpbun answers / with 200). The controller, the webhook and lint warn (passthrough-backend-protocol: set backend-protocol HTTPS); the passthrough half of the It passes in settings/ssl_passthrough.test.ts',
  },
  'tcpudp/tcp.go:80': {
    kind: 'differs on purpose', differences: 'NGINX configuration',
    why: 'a TCP/UDP service\'s ExternalName must be an address: a host name is refused with a warning (NGINX would resolve it at start, past the upstream address policy; ingress-rx has no stream Lua to resolve and judge it). The controller log and `lint` warn (rule l4-external-name; lint takes a ConfigMap named tcp-services or udp-services without the flag); the webhook cannot: ingress-nginx\'s ValidatingWebhookConfiguration, kept as it is, sends only Ingress writes, never a ConfigMap or a Service',
  },
  'annotations/modsecurity/modsecurity.go:354': {
    kind: 'differs on purpose',
    why: "its modsecurity-snippet writes ModSecurity's audit log to files on the node (SecAuditLogType Concurrent, SecAuditLog /var/tmp/…, SecAuditLogStorageDir): a tenant's snippet is read as a subset of SecLang that writes no file, so the snippet is refused whole with a warning naming the line (docs/security.md, modsecurity-snippet) and its rules do not run",
    differences: 'ModSecurity',
  },
  'annotations/auth.go:641': {
    kind: 'not applicable',
    why: "auth-keepalive-share-vars chooses whether ingress-nginx's kept-alive auth subrequest (Lua's ngx.location.capture) shares the request's variables. ingress-rx makes every auth subrequest with NGINX's auth_request, which always shares them, as \"true\" does (auth-keepalive-share-vars is checked, without effect; docs/differences.md, \"auth-keepalive\"; annotations/auth.go:660 is ported)",
  },
  'settings/badannotationvalues.go:36': BLOCKLIST_REJECTS_THE_ANNOTATION,
  'settings/badannotationvalues.go:68': BLOCKLIST_REJECTS_THE_ANNOTATION,
  'settings/badannotationvalues.go:138': BLOCKLIST_REJECTS_THE_ANNOTATION,
};
