// The ConfigMap keys printed outside the servers: listen addresses by family (bind-address,
// disable-ipv6), syslog targets and the operator's snippets, through their filters.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defaultSettings } from '../../../src/model/core/config/defaults.js';
import { httpAccessLog, listenAddresses, logTargets, mainDirectives, streamDirectives } from '../../../src/render/settings-directives.js';
import { defaultRuntime } from '../../../src/render/runtime.js';

const rt = (listen: string[]) => ({ ...defaultRuntime(), listenAddresses: listen });
const paths = { error: '/e.log', http: '/a.log', stream: '/s.log' };

test('bind-address replaces the wildcards by family; disable-ipv6 drops IPv6; explicit addresses stay', () => {
  const s = defaultSettings();
  assert.equal(listenAddresses(s, rt(['*', '[::]'])), ['*', '[::]']);
  assert.equal(listenAddresses({ ...s, bindAddress: ['10.0.0.1', '10.0.0.2'] }, rt(['*', '[::]'])), ['10.0.0.1', '10.0.0.2', '[::]']);
  assert.equal(listenAddresses({ ...s, bindAddress: ['10.0.0.1', 'fd00::1'] }, rt(['*', '[::]'])), ['10.0.0.1', '[fd00::1]']);
  assert.equal(listenAddresses({ ...s, disableIpv6: true }, rt(['*', '[::]'])), ['*']);
  assert.equal(listenAddresses({ ...s, bindAddress: ['fd00::1'], disableIpv6: true }, rt(['*', '[::]'])), ['*']);
  assert.equal(listenAddresses({ ...s, bindAddress: ['10.0.0.1'] }, rt(['127.0.0.1'])), ['127.0.0.1']);
});

test('the stream context trusts proxy-real-ip-cidr only with enable-real-ip (the PROXY header of a :PROXY TCP service)', () => {
  const s = { ...defaultSettings(), proxyRealIpCidr: ['10.0.0.0/8', 'fd00::/8'] };
  assert.not.match(streamDirectives(s), 'set_real_ip_from');
  assert.match(streamDirectives({ ...s, enableRealIp: true }), '    set_real_ip_from 10.0.0.0/8;\n    set_real_ip_from fd00::/8;\n');
});

test('syslog is an IP address target; access-log-params apply to files only', () => {
  const s = { ...defaultSettings(), accessLogParams: 'buffer=4k' };
  assert.equal(logTargets(s, paths), { error: '"/e.log"', http: '"/a.log"', stream: '"/s.log"', params: ' buffer=4k' });
  const sys = logTargets({ ...s, enableSyslog: true, syslogHost: 'fd00::9', syslogPort: 1514 }, paths);
  assert.is(sys.http, 'syslog:server=[fd00::9]:1514');
  assert.is(sys.params, '');
  assert.throws(() => logTargets({ ...s, enableSyslog: true, syslogHost: 'logs.example;x', syslogPort: 514 }, paths));
});

test('the main-snippet is read again when rendered: a block it cannot hold is refused', () => {
  assert.match(mainDirectives({ ...defaultSettings(), mainSnippet: 'env A;', workerCpuAffinity: 'auto' }), /worker_cpu_affinity auto;\n# main-snippet \(ConfigMap\)\nenv A;/);
  assert.throws(() => mainDirectives({ ...defaultSettings(), mainSnippet: 'http { }' }), /http/);
  assert.throws(() => mainDirectives({ ...defaultSettings(), mainSnippet: 'env A; }\nhttp {' }));
});

test('the access log asks $loggable only when skip-access-log-urls can make it 0', () => {
  const s = defaultSettings();
  assert.not.ok(httpAccessLog(s, defaultRuntime()).includes('if='), httpAccessLog(s, defaultRuntime()));
  assert.ok(httpAccessLog({ ...s, skipAccessLogUrls: ['/healthz'] }, defaultRuntime()).includes(' upstreaminfo if=$loggable'));
  assert.equal(httpAccessLog({ ...s, enableAccessLog: false }, defaultRuntime()), '');
});

test.run();
