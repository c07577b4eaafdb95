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
  'settings/badannotationvalues.go:36': BLOCKLIST_REJECTS_THE_ANNOTATION,
  'settings/badannotationvalues.go:68': BLOCKLIST_REJECTS_THE_ANNOTATION,
  'settings/badannotationvalues.go:138': BLOCKLIST_REJECTS_THE_ANNOTATION,
};
