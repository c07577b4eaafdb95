// custom-http-errors group: the location intercepts these upstream statuses and hands them to an
// internal location per status that asks the default backend (or the default-backend
// annotation's) for the error page, with ingress-nginx's X-Code/X-Format/... headers; with
// disable-proxy-intercept-errors only NGINX's own errors (502, 504) go there.
import type { NginxSettings } from '../../model/core/config/settings.js';
import type { Location } from '../../model/core/types.js';
import { DEFAULT_UPSTREAM } from '../../model/ingress/fragments.js';
import * as f from '../filters.js';
import { I, NONE, directives } from './layout.js';
import { modsecurityOff } from './modsecurity.js';
import type { RenderBlock, Shared } from './types.js';

/** The error pages' backend as part of a location name. */
function backendId(loc: Location): string {
  return (loc.settings.defaultBackend ?? DEFAULT_UPSTREAM).replace(/[^A-Za-z0-9_-]/g, '_');
}

function errorLocation(name: string, code: number, backend: string, settings: NginxSettings): string {
  const b = [
    'internal',
    ...modsecurityOff(settings),
    'proxy_intercept_errors off',
    `proxy_set_header X-Code ${code}`,
    'proxy_set_header X-Format $http_accept',
    'proxy_set_header X-Original-URI $request_uri',
    'proxy_set_header X-Namespace $namespace',
    'proxy_set_header X-Ingress-Name $ingress_name',
    'proxy_set_header X-Service-Name $service_name',
    'proxy_set_header X-Service-Port $service_port',
    'proxy_set_header X-Request-ID $req_id',
    'proxy_set_header Host $best_http_host',
    `set $proxy_upstream_name ${f.quote(backend, 'default-backend')}`,
    'rewrite (.*) / break',
    'proxy_pass http://upstream_balancer',
  ];
  return `\n        location ${name} {\n${directives(b)}${I}rewrite_by_lua_block {\n${I}    balancer.rewrite(${f.luaString(backend, 'default-backend')})\n${I}}\n        }\n`;
}

export const customHttpErrorsBlock: RenderBlock = {
  group: 'customhttperrors',
  applied: 'directives',
  location: {
    errors({ loc }) {
      if (loc.settings.customHttpErrors.length === 0) return '';
      const id = backendId(loc);
      return directives([...(loc.settings.disableProxyInterceptErrors ? [] : ['proxy_intercept_errors on']), ...loc.settings.customHttpErrors.map((code) => `error_page ${f.num(code, 'custom-http-errors')} = @custom_${id}_${code}`)]);
    },
    internal({ loc, settings }): readonly Shared[] {
      if (loc.settings.customHttpErrors.length === 0) return NONE;
      const id = backendId(loc);
      const backend = loc.settings.defaultBackend ?? DEFAULT_UPSTREAM;
      return loc.settings.customHttpErrors.map((code) => {
        const name = `@custom_${id}_${f.num(code, 'custom-http-errors')}`;
        return { name, text: () => errorLocation(name, code, backend, settings) };
      });
    },
  },
};
