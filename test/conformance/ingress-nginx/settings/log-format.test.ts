// ingress-nginx test/e2e/settings/log-format.go, ported: log-format-escape-json and
// log-format-escape-none decide how NGINX writes a variable's `"` in the access log (default:
// \x22; json: \"; none: as sent). The e2e test reads nginx.conf for the first five Its; the port
// reads what NGINX writes for a request whose User-Agent holds quotes, in the default
// log-format-upstream, and for the last three the e2e test's own formats. ConfigMap states that
// render alike (a key set to its default) share a configuration; Its of one state run together.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, statSync } from 'node:fs';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import type { ProtocolClient } from '../../../support/protocols.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'log-format.test';

test.before(async () => {
  fx = await startFixture('log-format', { configmap: {} });
  await fx.applyAndWait('ingress.json', [fx.single('log-format', HOST)], HOST);
});
test.after(() => fx.stop());

/** What NGINX appends to the access log while `send` runs (a line is written when its request ends). */
async function logged(send: () => Promise<unknown>, expected: string): Promise<string> {
  const start = statSync(fx.accessLog).size;
  await send();
  let text = '';
  for (let i = 0; i < 200 && !text.includes(expected); i++) {
    text = readFileSync(fx.accessLog).subarray(start).toString('utf8');
    if (!text.includes(expected)) await new Promise((r) => setTimeout(r, 25));
  }
  return text;
}

/** The default format's User-Agent, written as the escaping of the state asks. */
async function userAgentLogged(p: ProtocolClient, written: string): Promise<void> {
  const agent = `agent "${p.protocol}"`;
  const expected = written.replace('AGENT', p.protocol);
  const text = await logged(() => p.request(HOST, '/', { headers: { 'User-Agent': agent } }), expected);
  assert.ok(text.includes(expected), `the access log has ${expected}; it has:\n${text}`);
}

/** A format of the e2e test: `{"<a>":"$http_<a>", "<b>":"$http_<b>"}` in double quotes. */
const format = (a: string, b: string) => `"{"my_${a}":"$http_${a}", "my_${b}":"$http_${b}"}"`;

async function headerLogged(p: ProtocolClient, header: string, value: string, line: string): Promise<void> {
  const text = await logged(() => p.request(HOST, '/', { headers: { [header]: value } }).then((r) => assert.is(r.status, 200)), line);
  assert.ok(text.includes(line), `the access log has ${line}; it has:\n${text}`);
}

// Default escaping: the ConfigMap unset, or either key false.
its.both('settings/log-format.go:39', async (p) => {
  await fx.configure({});
  await userAgentLogged(p, String.raw`agent \x22AGENT\x22`);
});
its.both('settings/log-format.go:54', async (p) => {
  await fx.configure({ 'log-format-escape-json': 'false' });
  await userAgentLogged(p, String.raw`agent \x22AGENT\x22`);
});
its.both('settings/log-format.go:70', async (p) => {
  await fx.configure({ 'log-format-escape-none': 'false' });
  await userAgentLogged(p, String.raw`agent \x22AGENT\x22`);
});

const JSON_STATE = { 'log-format-escape-json': 'true', 'log-format-upstream': format('header1', 'header2') };
its.both('settings/log-format.go:46', async (p) => {
  await fx.configure(JSON_STATE);
  await headerLogged(p, 'header1', `json "${p.protocol}"`, String.raw`{"my_header1":"json \"${p.protocol}\"", "my_header2":""}`);
});
its.both('settings/log-format.go:80', async (p) => {
  await fx.configure(JSON_STATE);
  await headerLogged(p, 'header1', 'Here is "header1" with json escape', String.raw`{"my_header1":"Here is \"header1\" with json escape", "my_header2":""}`);
});

its.both('settings/log-format.go:103', async (p) => {
  await fx.configure({ 'log-format-escape-json': 'false', 'log-format-upstream': format('header3', 'header4') });
  await headerLogged(p, 'header3', 'Here is "header3" with default escape', String.raw`{"my_header3":"Here is \x22header3\x22 with default escape", "my_header4":"-"}`);
});

const NONE_STATE = { 'log-format-escape-none': 'true', 'log-format-upstream': format('header5', 'header6') };
its.both('settings/log-format.go:62', async (p) => {
  await fx.configure(NONE_STATE);
  await headerLogged(p, 'header5', `none "${p.protocol}"`, `{"my_header5":"none "${p.protocol}"", "my_header6":""}`);
});
its.both('settings/log-format.go:126', async (p) => {
  await fx.configure(NONE_STATE);
  await headerLogged(p, 'header5', 'Here is "header5" with none escape', '{"my_header5":"Here is "header5" with none escape", "my_header6":""}');
});

test.run();
