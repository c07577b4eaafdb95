// ingress-nginx test/e2e/settings/hash-size.go, ported: the hash sizes of the http context. They
// size NGINX's lookup tables and change nothing a request can see, so the port reads the
// configuration NGINX runs (with every key at once: they are independent directives), after a
// request shows NGINX serves with them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startFixture, type Fixture } from '../fixture.js';
import { ported } from '../port.js';
import { untilRunning } from '../../../support/local-harness.js';

let fx: Fixture;
const its = ported(test, () => fx.ctl);
const HOST = 'hash-size.test';
let conf = '';

test.before(async () => {
  fx = await startFixture('hash-size', {
    configmap: {
      'server-name-hash-bucket-size': '512', 'server-name-hash-max-size': '4096',
      'proxy-headers-hash-bucket-size': '512', 'proxy-headers-hash-max-size': '4096',
      'variables-hash-bucket-size': '512', 'variables-hash-max-size': '512',
      'map-hash-bucket-size': '512',
    },
  });
  await fx.applyAndWait('ingress.json', [fx.single('hash-size', HOST)], HOST);
  await untilRunning(fx.ctl, 'map_hash_bucket_size 512;');
  conf = (await fx.ctl.control('/nginx.conf')).body;
});
test.after(() => fx.stop());

const WHY = 'a hash table size, which no request can observe';
const directive = (text: string) => () => Promise.resolve(assert.ok(conf.includes(text), `the running nginx.conf has ${text}`));

its.noClient('settings/hash-size.go:39', WHY, directive('server_names_hash_bucket_size 512;'));
its.noClient('settings/hash-size.go:47', WHY, directive('server_names_hash_max_size 4096;'));
its.noClient('settings/hash-size.go:57', WHY, directive('proxy_headers_hash_bucket_size 512;'));
its.noClient('settings/hash-size.go:65', WHY, directive('proxy_headers_hash_max_size 4096;'));
its.noClient('settings/hash-size.go:75', WHY, directive('variables_hash_bucket_size 512;'));
its.noClient('settings/hash-size.go:83', WHY, directive('variables_hash_max_size 512;'));
its.noClient('settings/hash-size.go:93', WHY, directive('map_hash_bucket_size 512;'));

test.run();
