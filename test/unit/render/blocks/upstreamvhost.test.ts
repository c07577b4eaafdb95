// upstream-vhost block: the Host header sent upstream, inside the standard set the location then
// prints itself.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderLocation } from '../../../support/render-blocks.js';

test('Host is the vhost; without it the location inherits the http-level set', () => {
  const text = renderLocation({ upstreamVhost: 'api.internal:8080' }).locationsText;
  assert.match(text, 'proxy_set_header Host "api.internal:8080";');
  assert.match(text, 'proxy_set_header X-Forwarded-Host $this_host;');
  assert.not.match(renderLocation({}).locationsText, 'proxy_set_header');
  assert.match(renderLocation({ upstreamVhost: '$host' }).locationsText, 'proxy_set_header Host "$host";', 'a variable is expanded');
  // The location's variables are expanded; the value goes through the header escaping (set first).
  const linkerd = renderLocation({ upstreamVhost: '$service_name.$namespace.svc.cluster.local:8084' }).locationsText;
  assert.match(linkerd, 'set $upstream_vhost "$service_name.$namespace.svc.cluster.local:8084";');
  assert.match(linkerd, 'proxy_set_header Host $upstream_vhost;');
  assert.match(renderLocation({ upstreamVhost: '$nope' }).locationsText, 'proxy_set_header Host "${literal_dollar}nope";', 'other names stay literal');
});

test.run();
