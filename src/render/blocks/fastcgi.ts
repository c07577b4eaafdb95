// fastcgi group: fastcgi_index and the ConfigMap's fastcgi_param lines, beside the location's
// `include fastcgi_params` and fastcgi_pass (backend-protocol FCGI, ./backendprotocol.ts); as in
// ingress-nginx they are printed whatever the protocol (NGINX reads them only for fastcgi_pass).
import { fastcgiVariable } from '../../model/ingress/annotations/fastcgi.js';
import * as f from '../filters.js';
import { directives } from './layout.js';
import type { RenderBlock } from './types.js';

/** A parameter name as the model checked it; anything else never reaches nginx.conf. */
function paramName(name: string): string {
  if (!/^[A-Za-z0-9._-]{1,256}$/.test(name)) throw new f.RenderError('fastcgi-params-configmap', `not a parameter name: ${JSON.stringify(name.slice(0, 100))}`);
  return name;
}

export const fastcgiBlock: RenderBlock = {
  group: 'fastcgi',
  applied: 'directives',
  location: {
    proxy: ({ loc }) => {
      const c = loc.settings.fastcgi;
      if (c === null) return '';
      return directives([
        ...(c.index === '' ? [] : [`fastcgi_index ${f.quoteLiteral(c.index, 'fastcgi-index')}`]),
        ...Object.entries(c.params).map(([name, value]) => `fastcgi_param ${paramName(name)} ${f.quoteWithVariables(value, `fastcgi-params-configmap[${name}]`, {}, fastcgiVariable)}`),
      ]);
    },
  },
};
