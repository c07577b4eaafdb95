// ModSecurity with the OWASP Core Rule Set (Debian's libnginx-mod-http-modsecurity and
// modsecurity-crs) and brotli (libnginx-mod-http-brotli-filter), through real NGINX and real
// requests, as ingress-nginx applies the annotations and ConfigMap keys: one `ingress-rx local`
// in three phases (WAF per Ingress and brotli at level 1; WAF from the ConfigMap and brotli at
// level 11; neither, so neither module is loaded).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { startEchoServer, type EchoServer } from '../support/echo-server.js';
import { ingress, service, slices, startLocal, type LocalController } from '../support/local-harness.js';
import { waitFor } from '../support/wait.js';
import { protocolMatrix, type ProtocolClient } from '../support/protocols.js';

const NS = 'waf';
const P = 'nginx.ingress.kubernetes.io';
let ctl: LocalController;
let echo: EchoServer;
const a = (annotations: Record<string, string>) => Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`${P}/${k}`, v]));
const on = (name: string, host: string, annotations: Record<string, string> = {}) =>
  ingress(NS, name, { host, annotations: a(annotations), paths: [{ path: '/', pathType: 'Prefix', service: 'main' }] });
const configMap = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'nginx-config', namespace: NS }, data });

/** A cross-site scripting probe the Core Rule Set scores far above its blocking threshold. */
const XSS = '/search?q=%3Cscript%3Ealert(document.cookie)%3C%2Fscript%3E';
/** ingress-nginx's own e2e snippet (test/e2e/annotations/modsecurity), as its users write it. */
const BLOCK_UA = `SecRuleEngine On
SecRequestBodyAccess On
SecRule REQUEST_HEADERS:User-Agent \\"block-ua\\" \\"log,deny,id:107,status:403,msg:\\'UA blocked\\'\\"`;

const runningConf = async () => (await ctl.control('/nginx.conf')).body;
const errorLog = () => readFileSync(join(ctl.workdir, 'logs', 'error.log'), 'utf8');

/** Rewrites the ConfigMap (and the WAF Ingresses) and waits until NGINX's workers run a configuration that has `marker`. */
async function phase(data: Record<string, string>, marker: (conf: string) => boolean, wafIngresses?: object[]): Promise<void> {
  if (wafIngresses) ctl.write('waf-ingresses.json', wafIngresses);
  else if (existsSync(join(ctl.dir, 'waf-ingresses.json'))) ctl.remove('waf-ingresses.json');
  ctl.write('configmap.json', [configMap(data)]);
  await waitFor(async () => {
    const conf = await runningConf();
    const checksum = /^# Configuration checksum: (\w+)/.exec(conf)?.[1];
    return marker(conf) && (await ctl.control('/configuration-checksum')).body === checksum;
  }, { timeoutMs: 30_000, what: 'NGINX running the phase configuration' });
  await ctl.until('plain.test', '/', (r) => r.status === 200);
}

/** The raw bytes of an answer (the harness reads text, which would mangle a brotli body). */
/** A request over `p`'s protocol: its status, Content-Encoding and body as received. */
async function bytes(p: ProtocolClient, host: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; encoding: string | undefined; body: Buffer }> {
  const r = await p.request(host, path, { headers });
  return { status: r.status, encoding: r.headers['content-encoding'], body: r.bytes };
}

/** Headers that make the echo's JSON answer about `n` bytes longer (it repeats the request headers). */
const padded = (n: number) => ({ 'X-Pad': 'p'.repeat(n) });

const WAF_INGRESSES = [
  // Blocks: the Core Rule Set with the engine turned on by the tenant's snippet; a transaction id from a request header.
  on('waf', 'waf.test', {
    'enable-modsecurity': 'true', 'enable-owasp-core-rules': 'true',
    'modsecurity-snippet': 'SecRuleEngine On', 'modsecurity-transaction-id': 'waf-$http_x_test_txn',
  }),
  // Detects only: ModSecurity's base configuration, as ingress-nginx ships it.
  on('detect', 'detect.test', { 'enable-modsecurity': 'true', 'enable-owasp-core-rules': 'true' }),
  on('ua', 'ua.test', { 'enable-modsecurity': 'true', 'modsecurity-snippet': BLOCK_UA }),
  // Hostile: a snippet that would read a file on the node; the Ingress is still served.
  on('evil', 'evil.test', { 'enable-modsecurity': 'true', 'modsecurity-snippet': 'SecRuleEngine On\nInclude /etc/passwd' }),
  on('evil-snippet', 'evil-snippet.test', { 'configuration-snippet': "modsecurity_rules 'Include /etc/passwd';" }),
  // Passes the subset, but libmodsecurity refuses it (an unknown variable): NGINX refuses the configuration.
  on('broken', 'broken.test', { 'enable-modsecurity': 'true', 'modsecurity-snippet': 'SecRule NO_SUCH_VARIABLE \\"@rx a\\" \\"id:1\\"' }),
];

const SNIPPETS_ALLOWED = { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical' };

const perIngress = suite('phase 1: ModSecurity per Ingress; brotli at level 1 for application/json of at least 1000 bytes');
const overPerIngress = protocolMatrix(perIngress, () => ctl);

perIngress.before(async () => {
  echo = await startEchoServer({ address: '127.0.6.10', name: 'main' });
  ctl = await startLocal({
    args: ['--configmap', `${NS}/nginx-config`],
    files: {
      'services.json': [service(NS, 'main'), ...slices(NS, 'main', [echo])],
      'ingresses.json': [on('plain', 'plain.test'), on('off', 'off.test', { 'enable-modsecurity': 'false' }),
        on('tenant-off', 'tenant-off.test', { 'modsecurity-snippet': 'SecRuleEngine Off' })],
    },
  });
  await phase({ ...SNIPPETS_ALLOWED, 'enable-brotli': 'true', 'brotli-level': '1', 'brotli-min-length': '1000', 'brotli-types': 'application/json' },
    (c) => c.includes('brotli_comp_level 1;') && c.includes('modsecurity_transaction_id'), WAF_INGRESSES);
});

overPerIngress.both('enable-owasp-core-rules with SecRuleEngine On blocks an XSS probe with 403; other hosts are untouched', async (p) => {
  assert.is((await p.request('waf.test', XSS)).status, 403);
  const ok = await p.request('waf.test', '/search?q=shoes');
  assert.is(ok.status, 200);
  assert.is(ok.backend, 'main');
  for (const host of ['plain.test', 'off.test', 'tenant-off.test']) assert.is((await p.request(host, XSS)).status, 200, host);
  // Two Ingresses ask for the Core Rule Set; NGINX parses it once (ingress-nginx: once per location).
  assert.is((await runningConf()).match(/modsecurity_rules_file "[^"]*owasp-crs\.conf";/g)?.length, 1);
});

overPerIngress.both('modsecurity-transaction-id names the transaction in ModSecurity\'s log', async (p) => {
  assert.is((await p.request('waf.test', XSS, { headers: { 'X-Test-Txn': 'abc123' } })).status, 403);
  await waitFor(() => /ModSecurity: Access denied with code 403[^\n]*\[unique_id "waf-abc123"\][^\n]*host: "waf.test"/.test(errorLog()), { what: 'the denial with its transaction id' });
});

overPerIngress.both('without SecRuleEngine On the base configuration only detects (as ingress-nginx ships it)', async (p) => {
  assert.is((await p.request('detect.test', XSS)).status, 200);
  // The base configuration's audit log holds the transaction (RelevantOnly: it had warnings).
  const audit = join(ctl.workdir, 'logs', 'modsec_audit.log');
  await waitFor(() => existsSync(audit) && /Host: detect\.test[\s\S]*XSS Attack Detected/.test(readFileSync(audit, 'utf8')), { what: 'the detection in the audit log' });
  assert.not.match(errorLog(), /Access denied[^\n]*host: "detect.test"/);
});

overPerIngress.both("ingress-nginx's own modsecurity-snippet blocks what it says and lets the rest through", async (p) => {
  assert.is((await p.request('ua.test', '/', { headers: { 'User-Agent': 'block-ua' } })).status, 403);
  assert.is((await p.request('ua.test', '/', { headers: { 'User-Agent': 'curl/8' } })).status, 200);
  // Only the Core Rule Set's locations have it: an XSS probe passes here.
  assert.is((await p.request('ua.test', XSS)).status, 200);
});

overPerIngress.both('a snippet that would read a file on the node is refused and named; its Ingress and the others are served', async (p) => {
  const out = ctl.output();
  assert.match(out, /Ingress waf\/evil[^\n]*modsecurity-snippet[^\n]*line 2: Include reads files on the node/);
  assert.match(out, /Ingress waf\/evil-snippet[^\n]*configuration-snippet[^\n]*modsecurity_rules: line 1: Include reads files on the node/);
  const conf = await runningConf();
  assert.not.match(conf, /Include \/etc\/passwd/);
  assert.not.match(conf, /root:x:0:0/);
  assert.is((await p.request('evil.test', '/')).status, 200);
  assert.is((await p.request('evil-snippet.test', '/')).status, 200);
});

overPerIngress.both('rules ModSecurity itself refuses quarantine their Ingress alone', async (p) => {
  await waitFor(() => /Ingress waf\/broken is quarantined/.test(ctl.output()), { what: 'broken to be quarantined' });
  assert.is((await p.request('broken.test', '/')).status, 404, 'a quarantined Ingress is not served');
  assert.is((await p.request('waf.test', XSS)).status, 403);
  assert.is((await p.request('ua.test', '/')).status, 200);
});

overPerIngress.both('brotli: application/json of at least brotli-min-length bytes, decoded by Node to the echo\'s answer', async (p) => {
  const big = await bytes(p, 'plain.test', '/json', { 'Accept-Encoding': 'br', ...padded(3000) });
  assert.is(big.status, 200);
  assert.is(big.encoding, 'br');
  const json = JSON.parse(brotliDecompressSync(big.body).toString()) as { name: string; headers: Record<string, string> };
  assert.is(json.name, 'main');
  assert.is(json.headers['x-pad'], 'p'.repeat(3000));
  level1Size = big.body.length;
  // Shorter than brotli-min-length, another type, or a client that does not ask: as the backend sent it.
  const small = await bytes(p, 'plain.test', '/json', { 'Accept-Encoding': 'br' });
  assert.ok(small.body.length < 1000);
  assert.is(small.encoding, undefined);
  assert.is(JSON.parse(small.body.toString()).name, 'main');
  assert.is((await bytes(p, 'plain.test', '/__bytes/5000', { 'Accept-Encoding': 'br' })).encoding, undefined, 'application/octet-stream is not in brotli-types');
  assert.is((await bytes(p, 'plain.test', '/json', { 'Accept-Encoding': 'gzip', ...padded(3000) })).encoding, undefined);
});

let level1Size = 0;

const fromConfigMap = suite('phase 2: ModSecurity and the Core Rule Set from the ConfigMap; brotli at level 11');
const overConfigMap = protocolMatrix(fromConfigMap, () => ctl);

fromConfigMap.before(async () => {
  await phase({
    ...SNIPPETS_ALLOWED, 'enable-modsecurity': 'true', 'enable-owasp-modsecurity-crs': 'true', 'modsecurity-snippet': 'SecRuleEngine On',
    'enable-brotli': 'true', 'brotli-level': '11', 'brotli-min-length': '1000', 'brotli-types': 'application/json',
  }, (c) => c.includes('brotli_comp_level 11;') && c.includes("    modsecurity_rules 'SecRuleEngine On';"));
});

overConfigMap.both('every host is inspected; enable-modsecurity "false" and a tenant\'s SecRuleEngine Off turn it off for their own locations only', async (p) => {
  assert.is((await p.request('plain.test', XSS)).status, 403);
  assert.is((await p.request('plain.test', '/search?q=shoes')).status, 200);
  assert.is((await p.request('off.test', XSS)).status, 200);
  assert.is((await p.request('tenant-off.test', XSS)).status, 200);
  // The controller still reaches NGINX's control server, which ModSecurity leaves alone.
  assert.is((await ctl.control('/healthz')).status, 200);
});

overConfigMap.both('brotli-level: level 11 sends fewer bytes than level 1 for the same answer', async (p) => {
  const r = await bytes(p, 'plain.test', '/json', { 'Accept-Encoding': 'br', ...padded(3000) });
  assert.is(r.encoding, 'br');
  assert.is(JSON.parse(brotliDecompressSync(r.body).toString()).headers['x-pad'], 'p'.repeat(3000));
  assert.ok(level1Size > 0 && r.body.length < level1Size, `level 11: ${r.body.length} bytes, level 1: ${level1Size}`);
});

const neither = suite('phase 3: nothing asks for ModSecurity or brotli');
const overNeither = protocolMatrix(neither, () => ctl);

neither.before(async () => {
  await phase({ ...SNIPPETS_ALLOWED }, (c) => !c.includes('brotli'));
});

overNeither.both('neither module is loaded, nothing is compressed or inspected', async (p) => {
  const conf = await runningConf();
  assert.not.match(conf, /modsecurity/);
  assert.not.match(conf, /brotli/);
  assert.is((await bytes(p, 'plain.test', '/json', { 'Accept-Encoding': 'br', ...padded(3000) })).encoding, undefined);
  assert.is((await p.request('plain.test', XSS)).status, 200);
  // tenant-off.test's snippet alone does not turn ModSecurity on (as ingress-nginx).
  assert.is((await p.request('tenant-off.test', '/')).status, 200);
});

neither.after(async () => {
  await ctl?.stop();
  await echo?.close();
});

perIngress.run();
fromConfigMap.run();
neither.run();
