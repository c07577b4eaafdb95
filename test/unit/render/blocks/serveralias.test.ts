// server-alias block: the aliases after the host in server_name (and the server's marker).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderLocation } from '../../../support/render-blocks.js';

test('aliases follow the host; a name the host filter refuses leaves the server out', () => {
  const view = renderLocation({}, { server: { aliases: ['www.example.com', '*.example.org'] } });
  assert.is(view.serverName, 'app.example.com www.example.com *.example.org');
  assert.is(view.names, 'app.example.com www.example.com *.example.org');
  assert.throws(() => renderLocation({}, { server: { aliases: ['a.example.com; server_name evil'] } }), /server-alias/);
});

test.run();
