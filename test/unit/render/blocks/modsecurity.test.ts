// The modsecurity block as ingress-nginx's template decides it (buildModSecurityForLocation and
// the http block): what each combination of the ConfigMap keys and the annotations prints, the
// module and files only when something uses them, `modsecurity off` in internal locations, and
// the Core Rule Set parsed once. The end-to-end behaviour is test/e2e/waf-brotli.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auxiliaryFiles, createRenderer } from '../../../../src/render/engine.js';
import { DEFAULT_TEMPLATE_DIR, defaultRuntime } from '../../../../src/render/runtime.js';
import { modsecurityPaths } from '../../../../src/render/blocks/modsecurity.js';
import type { ModSecurityConfig } from '../../../../src/model/ingress/annotations/modsecurity.js';
import type { NginxSettings } from '../../../../src/model/core/config/settings.js';
import { silentLogger } from '../../../../src/log.js';
import { configuration, location, server } from '../../../support/config-builder.js';

const rt = defaultRuntime({ prefix: '/tmp/irx-modsec-unit' });
const renderer = createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() });
const { base, crs } = modsecurityPaths(rt);

const ms = (over: Partial<ModSecurityConfig>): ModSecurityConfig => ({ enable: null, owaspRules: false, transactionId: '', rules: [], ...over });
const render = (locs: Array<ModSecurityConfig | null>, settings: Partial<NginxSettings> = {}) => {
  const cfg = configuration(locs.map((m, i) => server(`h${i}.example.com`, {
    locations: [location({ modsecurity: m, customHttpErrors: [418], externalAuth: null })],
  })), {}, settings);
  return { text: renderer.render(cfg, rt), files: auxiliaryFiles(cfg, rt).map((f) => f.path) };
};
/** The body of host `h<i>`'s first location. */
const loc = (text: string, i: number) => text.slice(text.indexOf(`server_name h${i}.example.com;`)).split('location ')[1]!;

test('nothing asks for ModSecurity: no module, no directive, no file', () => {
  const r = render([null, ms({ owaspRules: true, rules: ['SecRuleEngine On'] })]);
  assert.not.match(r.text, /modsecurity/);
  assert.equal(r.files.filter((f) => f.includes('modsecurity')), []);
});

test('the annotation alone: module, `modsecurity on` with the base configuration, the transaction id; false prints nothing', () => {
  const r = render([ms({ enable: true, transactionId: '$request_id' }), ms({ enable: false })]);
  assert.match(r.text, /load_module "[^"]*ngx_http_modsecurity_module\.so";/);
  assert.match(loc(r.text, 0), `modsecurity on;\n            modsecurity_transaction_id "$request_id";\n            modsecurity_rules_file "${base}";\n`);
  assert.not.match(loc(r.text, 1), /modsecurity/);
  assert.ok(r.files.includes(base));
  assert.not.ok(r.files.includes(crs));
  // Not on at http level: internal locations and the control server need no `modsecurity off`.
  assert.not.match(r.text, /modsecurity off/);
});

test("a tenant's snippet replaces the base configuration, escaped for NGINX's single quotes", () => {
  const r = render([ms({ enable: true, rules: ["SecRule ARGS \"@rx a\" \"id:1,msg:'x\\\\y'\""] })]);
  assert.match(loc(r.text, 0), `modsecurity on;\n            modsecurity_rules 'SecRule ARGS "@rx a" "id:1,msg:\\'x\\\\\\\\y\\'"';\n`);
  assert.not.match(loc(r.text, 0), base);
});

test('the ConfigMap: on at http level with the base (or its snippet) and the Core Rule Set; off for an Ingress saying false; internal locations off', () => {
  const r = render([null, ms({ enable: false }), ms({ rules: ['SecRuleEngine Off'] })], { enableModsecurity: true, enableOwaspModsecurityCrs: true });
  assert.match(r.text, `    modsecurity on;\n    modsecurity_rules_file "${base}";\n    modsecurity_rules_file "${crs}";\n`);
  assert.not.match(loc(r.text, 0), /modsecurity/);
  assert.match(loc(r.text, 1), 'modsecurity off;');
  assert.match(loc(r.text, 2), "modsecurity_rules 'SecRuleEngine Off';");
  assert.not.match(loc(r.text, 2), /modsecurity on|modsecurity_rules_file/);
  // The error pages of custom-http-errors and the control server are not inspected.
  assert.match(r.text, /location @custom_upstream-default-backend_418 \{\n\s+internal;\n\s+modsecurity off;/);
  assert.match(r.text, /listen "unix:[^\n]*\n(?:.*\n){0,6}\s+modsecurity off;/);
  const snippet = render([null], { enableModsecurity: true, modsecuritySnippet: ['SecRuleEngine On'] });
  assert.match(snippet.text, "    modsecurity on;\n    modsecurity_rules 'SecRuleEngine On';\n");
  assert.not.match(snippet.text, base);
});

test('enable-owasp-core-rules: the Core Rule Set once at http level, behind a skip every location passes unless it opts in', () => {
  const r = render([ms({ enable: true, owaspRules: true }), ms({ enable: true, owaspRules: true }), ms({ enable: true })]);
  assert.is(r.text.match(new RegExp(`modsecurity_rules_file "${crs}";`, 'g'))?.length, 1);
  for (const phase of [1, 2, 3, 4, 5]) assert.match(r.text, `"id:199000${phase},phase:${phase},pass,nolog,skipAfter:INGRESS-RX-END-CRS"`);
  assert.match(r.text, "modsecurity_rules 'SecMarker INGRESS-RX-END-CRS';");
  const optIn = 'setvar:tx.ingress_rx_crs=1';
  assert.match(loc(r.text, 0), optIn);
  assert.match(loc(r.text, 1), optIn);
  assert.not.match(loc(r.text, 2), optIn);
  // The location's own rules come before the opt-in (ModSecurity runs them before the inherited Core Rule Set).
  assert.ok(loc(r.text, 0).indexOf(base) < loc(r.text, 0).indexOf(optIn));
  assert.ok(r.files.includes(crs));
  // The ConfigMap's Core Rule Set covers every location: no guard, no opt-in (as ingress-nginx prints no second copy).
  const all = render([ms({ owaspRules: true })], { enableModsecurity: true, enableOwaspModsecurityCrs: true });
  assert.not.match(all.text, /INGRESS-RX-END-CRS|ingress_rx_crs/);
});

test.run();
