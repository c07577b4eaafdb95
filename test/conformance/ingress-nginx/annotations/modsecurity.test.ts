// ingress-nginx test/e2e/annotations/modsecurity/modsecurity.go and
// settings/modsecurity/modsecurity_snippet.go, ported with Debian's ModSecurity and OWASP Core
// Rule Set (docs/differences.md, "ModSecurity"): one controller, a host per It, every Ingress
// written in `before`, and three ConfigMap states in turn (ModSecurity per Ingress; on for all
// with the Core Rule Set and the operator's `SecRuleEngine On`; the same with snippet annotations
// turned off). The settings It shares the second state, so the file reloads three times. Where
// the e2e test reads nginx.conf, the port sends what ModSecurity answers or records: a denied
// User-Agent, a cross-site scripting probe, a request body it cannot parse (the base
// configuration's rule 200002, which only detects), and the audit log of the base configuration.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFixture, upstreamHeaders, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { waitFor } from '../../../support/wait.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const h = (it: string) => `m${it}.modsec.test`;

/** The e2e test's snippet: the engine on, and a rule denying one User-Agent (written as users write it, `\"` inside NGINX's quotes). */
const DEFAULT_SNIPPET = `SecRuleEngine On
    SecRequestBodyAccess On
    SecAuditEngine RelevantOnly
    SecAuditLogParts ABIJDEFHZ
    SecAuditLog /dev/stdout
    SecAuditLogType Serial
    SecRule REQUEST_HEADERS:User-Agent \\"block-ua\\" \\"log,deny,id:107,status:403,msg:\\'UA blocked\\'\\"`;
/** The same without the engine line (modsecurity.go:269, :309): the ConfigMap's snippet turns it on. */
const WITHOUT_ENGINE = DEFAULT_SNIPPET.split('\n').slice(1).map((l) => l.trim()).join('\n    ');
/** modsecurity.go:354's snippet: a concurrent audit log of its own, in files on the node. */
const OWN_AUDIT = `SecRuleEngine On
    SecRequestBodyAccess On
    SecAuditEngine RelevantOnly
    SecAuditLogParts ABIJDEFHZ
    SecAuditLogType Concurrent
    SecAuditLog /var/tmp/modsec_audit.log
    SecAuditLogStorageDir /var/tmp/
    SecRule REQUEST_HEADERS:User-Agent \\"block-ua\\" \\"log,deny,id:107,status:403,msg:\\'UA blocked\\'\\"`;

/** A cross-site scripting probe the Core Rule Set scores far above its blocking threshold. */
const XSS = '/search?q=%3Cscript%3Ealert(document.cookie)%3C%2Fscript%3E';
const SNIPPETS = { 'allow-snippet-annotations': 'true', 'annotations-risk-level': 'Critical', 'annotation-value-word-blocklist': 'load_module, lua_package, _by_lua, location, root, {, }' };
const GLOBAL = { ...SNIPPETS, 'enable-modsecurity': 'true', 'enable-owasp-modsecurity-crs': 'true', 'modsecurity-snippet': 'SecRuleEngine On' };

const auditLog = () => join(fx.ctl.workdir, 'logs', 'modsec_audit.log');
const audit = () => (existsSync(auditLog()) ? readFileSync(auditLog(), 'utf8') : '');
const blockUa = (p: ProtocolClient, it: string) => p.request(h(it), '/', { headers: { 'User-Agent': 'block-ua' } });
/** A JSON body ModSecurity cannot parse, to a path naming the It and protocol. */
const badJson = (p: ProtocolClient, it: string) =>
  p.request(h(it), `/body-${it}-${p.tag}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"a":' });

const perIngress = suite('ModSecurity per Ingress');
const forAll = suite('ModSecurity for all (ConfigMap), the Core Rule Set and the operator\'s snippet');
const snippetsOff = suite('ModSecurity for all, snippet annotations turned off');

perIngress.before(async () => { try {
  fx = await startFixture('modsecurity', { configmap: SNIPPETS });
  const on = (it: string, a: Record<string, string>) => fx.single(`m${it}`, h(it), a);
  fx.apply('ingresses.json', [
    on('46', { 'enable-modsecurity': 'true' }),
    on('64', { 'enable-modsecurity': 'true', 'enable-owasp-core-rules': 'true', 'modsecurity-transaction-id': 'modsecurity-$request_id' }),
    on('85', { 'enable-modsecurity': 'false' }),
    on('102', { 'enable-modsecurity': 'true', 'modsecurity-snippet': 'SecRuleEngine On' }),
    on('169', { 'enable-modsecurity': 'true', 'modsecurity-snippet': DEFAULT_SNIPPET }),
    on('354', { 'enable-modsecurity': 'true', 'modsecurity-snippet': OWN_AUDIT }),
    on('124', { 'enable-modsecurity': 'true' }),
    on('147', { 'enable-modsecurity': 'false' }),
    on('202', { 'modsecurity-snippet': DEFAULT_SNIPPET }),
    on('235', { 'modsecurity-snippet': DEFAULT_SNIPPET }),
    on('269', { 'modsecurity-snippet': WITHOUT_ENGINE }),
    on('309', { 'modsecurity-snippet': WITHOUT_ENGINE }),
    on('plain', {}),
  ]);
  await fx.ctl.until(h('169'), '/', (r) => r.status === 403, { headers: { 'User-Agent': 'block-ua' }, what: 'the ModSecurity Ingresses applied' });
  await fx.ctl.until(h('plain'), '/', (r) => r.status === 200, { what: 'the plain Ingress applied' });
  } catch (e) { console.error(e); throw e; }
});

const first = ported(perIngress, () => fx.ctl);

first.both('annotations/modsecurity/modsecurity.go:46', async (p) => {
  // The base configuration inspects and only detects: the body it cannot parse passes, and is recorded.
  assert.is((await badJson(p, '46')).status, 200);
  const entry = new RegExp(`POST /body-46-${p.tag} [\\s\\S]*?Failed to parse request body`);
  await waitFor(() => entry.test(audit()), { what: 'the detection in the audit log' });
});

first.both('annotations/modsecurity/modsecurity.go:64', async (p) => {
  // The Core Rule Set detects (the base configuration does not block) under the transaction id asked for.
  const r = await p.request(h('64'), XSS);
  assert.is(r.status, 200);
  const id = upstreamHeaders(r)['x-request-id'];
  assert.ok(id);
  await waitFor(() => new RegExp(`modsecurity-${id}[\\s\\S]*XSS Attack Detected`).test(audit()), { what: 'the detection under the transaction id' });
});

first.both('annotations/modsecurity/modsecurity.go:85', async (p) => {
  assert.is((await badJson(p, '85')).status, 200);
  // The audit log is written in order: once 46's later request is in it, 85's would be before it.
  assert.is((await badJson(p, '46')).status, 200);
  await waitFor(() => audit().includes(`POST /body-46-${p.tag}`), { what: 'a later transaction in the audit log' });
  assert.not.ok(audit().includes(`/body-85-${p.tag}`));
});

first.both('annotations/modsecurity/modsecurity.go:102', async (p) => {
  // `SecRuleEngine On` without rules has no effect a request can show: the running configuration
  // is read for it. The request still passes.
  assert.is((await p.request(h('102'), '/')).status, 200);
  const conf = (await fx.ctl.control('/nginx.conf')).body;
  const start = conf.search(/server_name "?m102\.modsec\.test"?[ ;]/);
  assert.ok(start > 0, 'the host has a server block');
  const server = conf.slice(start, conf.indexOf('\n    server {', start));
  assert.match(server, 'modsecurity on;');
  assert.match(server, /modsecurity_rules '?SecRuleEngine On/);
});

first.both('annotations/modsecurity/modsecurity.go:169', async (p) => {
  assert.is((await blockUa(p, '169')).status, 403);
  assert.is((await p.request(h('169'), '/', { headers: { 'User-Agent': 'curl/8' } })).status, 200);
});

// modsecurity.go:354 differs on purpose (dispositions.ts): its snippet writes files on the node,
// so ingress-rx refuses it whole, names the line, and serves the Ingress without it.
perIngress('a modsecurity-snippet naming its own audit log files (modsecurity.go:354) is refused with a warning; the Ingress is served', async () => {
  await fx.warned((w) => w.includes('m354') && w.includes('modsecurity-snippet') && /SecAuditLog/.test(w), 'the refused modsecurity-snippet of m354');
  assert.is((await fx.ctl.request(h('354'), '/', { headers: { 'User-Agent': 'block-ua' } })).status, 200);
});

forAll.before(async () => {
  await fx.configure(GLOBAL);
  await fx.ctl.until(h('plain'), XSS, (r) => r.status === 403, { what: 'ModSecurity on for all' });
});

const second = ported(forAll, () => fx.ctl);

second.both('settings/modsecurity/modsecurity_snippet.go:30', async (p) => {
  // The operator's snippet (`SecRuleEngine On`) is the http-level configuration: an Ingress without
  // annotations is blocked by the Core Rule Set (the base configuration would only detect).
  assert.is((await p.request(h('plain'), XSS)).status, 403);
  assert.is((await p.request(h('plain'), '/search?q=shoes')).status, 200);
});

second.both('annotations/modsecurity/modsecurity.go:124', async (p) => {
  // enable-modsecurity on an Ingress where the ConfigMap turned it on: the http-level configuration inspects.
  assert.is((await p.request(h('124'), XSS)).status, 403);
});

second.both('annotations/modsecurity/modsecurity.go:147', async (p) => {
  assert.is((await p.request(h('147'), XSS)).status, 200);
});

second.both('annotations/modsecurity/modsecurity.go:202', async (p) => {
  assert.is((await blockUa(p, '202')).status, 403);
});

second.both('annotations/modsecurity/modsecurity.go:235', async (p) => {
  assert.is((await blockUa(p, '235')).status, 403);
  assert.is((await p.request(h('235'), XSS)).status, 403, 'the Core Rule Set too');
});

second.both('annotations/modsecurity/modsecurity.go:269', async (p) => {
  // The Ingress's rule, with the engine the ConfigMap's snippet turns on.
  assert.is((await blockUa(p, '269')).status, 403);
  assert.is((await p.request(h('269'), '/', { headers: { 'User-Agent': 'curl/8' } })).status, 200);
});

snippetsOff.before(async () => {
  await fx.configure({ ...GLOBAL, 'allow-snippet-annotations': 'false' });
  await fx.ctl.until(h('309'), '/', (r) => r.status === 200, { headers: { 'User-Agent': 'block-ua' }, what: 'the snippet annotation ignored' });
});
snippetsOff.after(async () => { await fx?.stop(); });

const third = ported(snippetsOff, () => fx.ctl);

third.both('annotations/modsecurity/modsecurity.go:309', async (p) => {
  assert.is((await blockUa(p, '309')).status, 200);
  assert.is((await p.request(h('309'), XSS)).status, 403, 'the ConfigMap\'s ModSecurity still inspects');
  await fx.warned((w) => w.includes('m309') && w.includes('modsecurity-snippet'), 'the refused modsecurity-snippet of m309');
});

perIngress.run();
forAll.run();
snippetsOff.run();
