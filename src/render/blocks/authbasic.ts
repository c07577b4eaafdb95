// authbasic group: auth_basic with the users of the auth Secret, written as an htpasswd file
// beside nginx.conf (a directory per namespace, see authFilePath). Basic auth keeps the client's
// credentials from the backend, as ingress-nginx does. Digest is parsed but not served: the
// location is denied rather than left open.
import type { Location } from '../../model/core/types.js';
import * as f from '../filters.js';
import { authFilePath } from '../runtime.js';
import { NONE, directives } from './layout.js';
import type { RenderBlock } from './types.js';

/** The basic-auth settings whose htpasswd file a location reads, if it reads one. */
function authFileOf(loc: Location): Location['settings']['basicAuth'] {
  return loc.settings.basicAuth && !loc.denied ? loc.settings.basicAuth : null;
}

export const authBasicBlock: RenderBlock = {
  group: 'authbasic',
  applied: 'directives',
  location: {
    deny: ({ loc }) => (loc.settings.basicAuth?.type === 'digest' ? 'auth-type digest is not supported' : null),
    access: ({ loc, runtime }) => (loc.settings.basicAuth
      ? directives([`auth_basic ${f.quote(loc.settings.basicAuth.realm, 'auth-realm')}`, `auth_basic_user_file ${f.quoteLiteral(authFilePath(runtime, loc.settings.basicAuth.secret), 'auth-secret')}`])
      : ''),
    headers: ({ loc, hdr }) => (loc.settings.basicAuth ? { lines: [`${hdr} Authorization ""`] } : null),
  },
  files(loc, runtime) {
    const ba = authFileOf(loc);
    if (!ba) return NONE;
    for (const line of ba.users) {
      if (/[\r\n\u0000]/.test(line) || !/^[^:]+:/.test(line)) throw new f.RenderError(`auth-secret ${ba.secret}`, 'invalid htpasswd line');
    }
    // Password hashes: readable by NGINX's workers only.
    return [{ path: authFilePath(runtime, ba.secret), content: ba.users.map((l) => `${l}\n`).join(''), mode: 0o600, readByWorkers: true }];
  },
};
