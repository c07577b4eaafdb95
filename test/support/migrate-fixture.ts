// The cluster dump of test/fixtures/migrate (every ingress-nginx annotation used at least once)
// and the options `lint` and `migrate-report` read it with.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const FIXTURES = new URL('../fixtures/', import.meta.url).pathname;
export const NOW = new Date('2026-11-22T00:00:00Z');
export const PREFIX = 'nginx.ingress.kubernetes.io';
/** ingress-nginx's ConfigMap in the dump. */
export const CONFIGMAP = 'ingress-nginx/ingress-nginx-controller';

export const clusterDump = () => [{ file: 'cluster.yaml', text: readFileSync(join(FIXTURES, 'migrate', 'cluster.yaml'), 'utf8') }];
