// The Its of ingress-nginx's e2e suite that have no ported test, each with the reason. A
// deliberate difference names the heading of docs/differences.md that explains it (and the
// webhook and `lint` warn about it); "not applicable" says why the behaviour cannot apply to
// ingress-rx. Keys are catalogue ids (`<file>:<line>`).

export type Disposition =
  | { kind: 'differs on purpose'; why: string; differences: string }
  | { kind: 'not applicable'; why: string };

export const DISPOSITIONS: Readonly<Record<string, Disposition>> = {
  'annotations/modsecurity/modsecurity.go:354': {
    kind: 'differs on purpose',
    why: "its modsecurity-snippet writes ModSecurity's audit log to files on the node (SecAuditLogType Concurrent, SecAuditLog /var/tmp/…, SecAuditLogStorageDir): a tenant's snippet is read as a subset of SecLang that writes no file, so the snippet is refused whole with a warning naming the line (docs/security.md, modsecurity-snippet) and its rules do not run",
    differences: 'ModSecurity',
  },
  'annotations/auth.go:641': {
    kind: 'not applicable',
    why: "auth-keepalive-share-vars chooses whether ingress-nginx's kept-alive auth subrequest (Lua's ngx.location.capture) shares the request's variables. ingress-rx makes every auth subrequest with NGINX's auth_request, which always shares them, as \"true\" does (auth-keepalive-share-vars is checked, without effect; docs/differences.md, \"auth-keepalive\"; annotations/auth.go:660 is ported)",
  },
};
