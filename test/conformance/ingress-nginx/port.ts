// ingress-nginx's own end-to-end suite as ours: each `ginkgo.It` of its test/e2e (v1.15.1, listed
// in catalogue.json by file and line) is ported as one test here, in our own words and
// manifests, through `ingress-rx local` and real NGINX, over HTTP/1.1 and HTTP/2. A ported test
// is registered by the It's id (`annotations/cors.go:40`); its name is the id and the It's text,
// so every result traces back to the behaviour ingress-nginx states. The ids registered here,
// and the Its set aside in dispositions.ts, make the table in docs/fidelity.md
// (scripts/gen-conformance.ts).
import { readFileSync } from 'node:fs';
import { protocolMatrix, type ProtocolClient, type Target } from '../../support/protocols.js';

export interface CatalogueEntry {
  /** `<file under test/e2e>:<line of the It>` at ingress-nginx's controller-v1.15.1. */
  id: string;
  file: string;
  /** The enclosing `ginkgo.Context`/`Describe` texts inside the file's top-level describe. */
  context: string[];
  it: string;
}

export const CATALOGUE: readonly CatalogueEntry[] = (
  JSON.parse(readFileSync(new URL('./catalogue.json', import.meta.url), 'utf8')) as { entries: CatalogueEntry[] }
).entries;

const BY_ID = new Map(CATALOGUE.map((e) => [e.id, e]));

/** The test name of a ported It: its id, the contexts and its text. */
export function portedName(id: string): string {
  const entry = BY_ID.get(id);
  if (!entry) throw new Error(`${id} is not an It of ingress-nginx's e2e suite (test/conformance/ingress-nginx/catalogue.json)`);
  return [id, ...entry.context, entry.it].join(' › ');
}

type Register = (name: string, fn: () => Promise<void>) => void;

/**
 * Registration of ported Its on `register` (uvu's `test` or a suite) against the controller
 * `target()` returns. `both` runs the behaviour over HTTP/1.1 and HTTP/2; `http1Only` is for a
 * behaviour HTTP/2 does not have (it says why). Ids are literal strings: the table's generator
 * reads them from the source.
 */
export function ported(register: Register, target: () => Target) {
  const matrix = protocolMatrix(register, target);
  return {
    both(id: string, fn: (p: ProtocolClient) => Promise<void>): void {
      matrix.both(portedName(id), fn);
    },
    http1Only(id: string, why: string, fn: (p: ProtocolClient) => Promise<void>): void {
      matrix.http1Only(portedName(id), why, fn);
    },
    /** A behaviour only HTTP/2 has (gRPC); `why` names it. */
    http2Only(id: string, why: string, fn: (p: ProtocolClient) => Promise<void>): void {
      matrix.http2Only(portedName(id), why, fn);
    },
    /** A behaviour with no client request at all (status, leader election, the webhook's answer). */
    noClient(id: string, why: string, fn: () => Promise<void>): void {
      register(`${portedName(id)} [no HTTP client: ${why}]`, fn);
    },
  };
}
