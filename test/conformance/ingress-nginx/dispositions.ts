// The Its of ingress-nginx's e2e suite that have no ported test, each with the reason. A
// deliberate difference names the heading of docs/differences.md that explains it (and the
// webhook and `lint` warn about it); "not applicable" says why the behaviour cannot apply to
// ingress-rx. Keys are catalogue ids (`<file>:<line>`).

export type Disposition =
  | { kind: 'differs on purpose'; why: string; differences: string }
  | { kind: 'not applicable'; why: string };

export const DISPOSITIONS: Readonly<Record<string, Disposition>> = {
};
