// The Its of ingress-nginx's e2e suite that have no ported test, each with the reason. A
// deliberate difference names the heading of docs/differences.md that explains it (and the
// webhook and `lint` warn about it); "not applicable" says why the behaviour cannot apply to
// ingress-rx. Keys are catalogue ids (`<file>:<line>`).

export type Disposition =
  | { kind: 'differs on purpose'; why: string; differences: string }
  | { kind: 'not applicable'; why: string };

export const DISPOSITIONS: Readonly<Record<string, Disposition>> = {
  'admission/admission.go:133': {
    kind: 'differs on purpose', differences: 'Model',
    why: 'a path holding /etc/nginx (or another of ingress-nginx\'s deep-inspection words) is served, escaped and never a file path; the webhook allows it with the warning deep-inspection, and lint reports it',
  },
  'tcpudp/tcp.go:80': {
    kind: 'differs on purpose', differences: 'NGINX configuration',
    why: 'a TCP/UDP service\'s ExternalName must be an address: a host name is refused with a warning (NGINX would resolve it at start, past the upstream address policy; ingress-rx has no stream Lua to resolve and judge it)',
  },
};
