// The Its of ingress-nginx's e2e suite that have no ported test, each with the reason. A
// deliberate difference names the heading of docs/differences.md that explains it (and the
// webhook and `lint` warn about it); "not applicable" says why the behaviour cannot apply to
// ingress-rx. Keys are catalogue ids (`<file>:<line>`).

export type Disposition =
  | { kind: 'differs on purpose'; why: string; differences: string }
  | { kind: 'not applicable'; why: string };

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
  'tcpudp/tcp.go:80': {
    kind: 'differs on purpose', differences: 'NGINX configuration',
    why: 'a TCP/UDP service\'s ExternalName must be an address: a host name is refused with a warning (NGINX would resolve it at start, past the upstream address policy; ingress-rx has no stream Lua to resolve and judge it)',
  },
};
