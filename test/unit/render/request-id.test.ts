// When lua/request_id.lua writes $req_id from its pool (src/render/request-id.ts): only where
// nothing in nginx.conf reads $request_id besides $req_id's map, nor $req_id before the rewrite
// phase; generate-request-id false turns it off.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRenderer } from '../../../src/render/engine.js';
import { defaultRuntime, DEFAULT_TEMPLATE_DIR } from '../../../src/render/runtime.js';
import { readsRequestIdElsewhere } from '../../../src/render/request-id.js';
import { silentLogger } from '../../../src/log.js';
import type { NginxSettings } from '../../../src/model/core/config/settings.js';
import type { Configuration } from '../../../src/model/core/types.js';
import { configuration, location, server } from '../../support/config-builder.js';

const RUNTIME = defaultRuntime({ prefix: '/var/lib/ingress-rx', listenAddresses: ['*'], luaDir: '/opt/ingress-rx/lua', resolvers: ['10.96.0.10'] });
const render = (config: Configuration) => createRenderer({ templateDir: DEFAULT_TEMPLATE_DIR, logger: silentLogger() }).render(config, RUNTIME);
const pool = (conf: string) => /require\("request_id"\)\.configure\((\w+)\)/.exec(conf)?.[1];
const withSettings = (settings: Partial<NginxSettings>, over: Partial<Configuration> = {}) =>
  configuration([server('a.test', { locations: [location({ path: '/' })] })], { dynamicRoutes: true, ...over }, settings);

test('the readers that leave the pool on: the two maps, the X-Request-ID header sent upstream, a log format', () => {
  const allowed = [
    '    map $http_x_request_id $req_id {\n        default $http_x_request_id;\n        "" $irx_req_id;\n    }',
    '    map "" $irx_req_id {\n        default $request_id;\n    }',
    '            proxy_set_header X-Request-ID $req_id;',
    '            grpc_set_header X-Request-ID $req_id;',
    "    log_format upstreaminfo '$remote_addr $status $req_id';",
    '    proxy_set_header X-Forwarded-For $remote_addr;',
    '    # a comment naming $request_id',
  ];
  for (const text of allowed) assert.is(readsRequestIdElsewhere(text), false, text);
});

test('the readers that turn it off: $request_id anywhere else, $req_id before or outside those lines, Lua reading either', () => {
  const refused = [
    "    log_format custom '$remote_addr $request_id';",
    '            proxy_set_header X-Trace $request_id;',
    '            modsecurity_transaction_id "${request_id}";',
    '            set $copy $req_id;',
    '            more_set_headers "X-Request-ID: $req_id";',
    '            access_by_lua_block { ngx.log(ngx.ERR, ngx.var.req_id) }',
    '            access_by_lua_block { ngx.log(ngx.ERR, ngx.var["request_id"]) }',
    '            proxy_set_header X-Request-ID $request_id;',
    '    map "" $other {\n        default $request_id;\n    }',
  ];
  for (const text of refused) assert.is(readsRequestIdElsewhere(`    server {\n${text}\n    }`), true, text);
  assert.is(readsRequestIdElsewhere('            proxy_set_header X-Other $http_x_request_id;'), false, 'the client\'s header is another variable');
});

test('nginx.conf: on by default, off with generate-request-id false, a log format or a snippet reading $request_id', () => {
  assert.is(pool(render(withSettings({}))), 'true');
  assert.is(pool(render(withSettings({}, { dynamicRoutes: false }))), 'true', 'static hosts too (balancer.rewrite writes it)');
  assert.is(pool(render(withSettings({ generateRequestId: false }))), 'false');
  assert.is(pool(render(withSettings({ logFormatUpstream: '$remote_addr $request_id' }))), 'false');
  assert.is(pool(render(withSettings({ logFormatUpstream: '$remote_addr $req_id' }))), 'true', '$req_id in a log format is read after the rewrite phase');
  assert.is(pool(render(withSettings({ allowSnippetAnnotations: true, httpSnippet: 'map $request_id $short { default 1; }' }))), 'false');
  const snippet = configuration([server('a.test', { locations: [location({ path: '/', configurationSnippet: 'set $copy $req_id;' })] })], { dynamicRoutes: true }, { allowSnippetAnnotations: true });
  assert.is(pool(render(snippet)), 'false', 'a location snippet reading $req_id in the rewrite module\'s phase');
});

test.run();
