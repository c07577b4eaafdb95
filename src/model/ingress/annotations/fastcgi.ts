// fastcgi group: fastcgi-index and fastcgi-params-configmap, the FastCGI settings of a location
// whose backend-protocol is FCGI (ingress-nginx's user-guide/fcgi-services.md): `fastcgi_index`,
// and one `fastcgi_param` per entry of a ConfigMap of the Ingress's namespace (name → value), such
// as SCRIPT_FILENAME, without which PHP-FPM cannot find the script. Keys and values are checked as
// ingress-nginx checks them (a name; path characters and NGINX variables); a ConfigMap that is
// missing, in another namespace or holds anything else denies the locations (503), so PHP-FPM is
// never sent half its parameters.
import { secretRef } from '../../../store/secret-ref.js';
import { InvalidValue, preview, type Check } from '../../checks/validate.js';
import { REDIRECT_VARIABLE } from '../../checks/redirect-url.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'fastcgi-index': 'Medium', 'fastcgi-params-configmap': 'Medium' } as const;

/** An index file name or a parameter name: ingress-nginx's `^[A-Za-z0-9.\-_]+$`. */
const NAME = /^[A-Za-z0-9._-]{1,256}$/;

const indexFile: Check<string> = (raw) => {
  const v = raw.trim();
  if (!NAME.test(v)) throw new InvalidValue(`"${preview(v)}" is not a file name (letters, digits, . - _)`);
  return v;
};

const configMapReference: Check<string> = (raw) => {
  const ref = secretRef(raw.trim(), '');
  if (ref === undefined) throw new InvalidValue('fastcgi-params-configmap must be `name` or `namespace/name` of a ConfigMap');
  return ref;
};

/** Variables a FastCGI parameter may name: the request's, and those the FastCGI module defines. */
export function fastcgiVariable(name: string): boolean {
  return REDIRECT_VARIABLE.test(name)
    || /^(document_root|realpath_root|fastcgi_script_name|fastcgi_path_info|request_filename|document_uri|query_string|content_type|content_length|request_scheme|server_protocol|https)$/.test(name);
}

const VARIABLE = /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g;

/** A parameter's value: ingress-nginx's `^[A-Za-z0-9\-_${}/.]*$`, a brace only around a variable's name. */
function paramValue(name: string, value: string): string {
  if (value.length > 4096) throw new InvalidValue(`the value of ${name} is ${value.length} characters long (at most 4096)`);
  for (const m of value.matchAll(VARIABLE)) {
    const variable = m[1] ?? m[2]!;
    if (!fastcgiVariable(variable)) throw new InvalidValue(`the value of ${name} names $${variable}, which is not a variable of the request or of FastCGI`);
  }
  if (!/^[A-Za-z0-9/._-]*$/.test(value.replace(VARIABLE, ''))) {
    throw new InvalidValue(`the value of ${name} holds characters other than letters, digits, / . - _ and variables: ${JSON.stringify(preview(value))}`);
  }
  return value;
}

export interface FastCGIConfig {
  /** fastcgi_index; '' for none. */
  readonly index: string;
  /** fastcgi_param name → value, in name order. */
  readonly params: Readonly<Record<string, string>>;
}

export interface FastCGIValue {
  readonly fastcgi: FastCGIConfig | null;
}

const fields = { fastcgi: 'location' } as const;

/** At most this many parameters: each is a directive of every location of the Ingress. */
export const MAX_FASTCGI_PARAMS = 100;

export const fastcgiGroup: AnnotationGroup<FastCGIValue, typeof fields> = {
  name: 'fastcgi',
  keys,
  fields,
  configMaps: ['fastcgi-params-configmap'],
  docs: {
    'fastcgi-index': { values: 'a file name (letters, digits, . - _)', default: 'none', description: 'fastcgi_index: the file appended to a URI ending in `/` in $fastcgi_script_name (with backend-protocol FCGI).' },
    'fastcgi-params-configmap': {
      values: '`name` of a ConfigMap in the Ingress\'s namespace (`namespace/name` of another only with allow-cross-namespace-resources)',
      default: 'none',
      description: 'One fastcgi_param per entry of the ConfigMap (name → value; values are path characters and NGINX variables such as `$document_root$fastcgi_script_name`), e.g. SCRIPT_FILENAME for PHP-FPM.',
      onInvalid: `warning; the location is denied (503) — also when the ConfigMap is missing, in another namespace, holds an invalid name or value, or more than ${MAX_FASTCGI_PARAMS} entries`,
    },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const index = r.get('fastcgi-index', indexFile, '');
    const read = r.read('fastcgi-params-configmap', configMapReference);
    if (read.state === 'absent') return { fastcgi: index === '' ? null : { index, params: {} } };
    const deny = (message: string) => ({ fastcgi: null, denied: `fastcgi-params-configmap: ${message}` });
    if (read.state === 'invalid') return deny(read.message);
    const namespace = ing.metadata.namespace ?? 'default';
    const ref = read.value.startsWith('/') ? `${namespace}${read.value}` : read.value;
    const fail = (message: string) => {
      r.warn('fastcgi-params-configmap', message);
      return deny(message);
    };
    if (!ref.startsWith(`${namespace}/`) && !ctx.settings.allowCrossNamespaceResources) {
      return fail(`ConfigMap ${ref} is in another namespace (allow-cross-namespace-resources is false)`);
    }
    const cm = ctx.store.getConfigMap(ref);
    if (cm === undefined) return fail(`ConfigMap ${ref} not found`);
    const entries = Object.entries(cm.data ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    if (entries.length > MAX_FASTCGI_PARAMS) return fail(`ConfigMap ${ref} holds ${entries.length} entries (at most ${MAX_FASTCGI_PARAMS})`);
    const params: Record<string, string> = {};
    try {
      for (const [name, value] of entries) {
        if (!NAME.test(name)) throw new InvalidValue(`${JSON.stringify(preview(name))} is not a parameter name (letters, digits, . - _)`);
        params[name] = paramValue(name, String(value));
      }
    } catch (err) {
      if (!(err instanceof InvalidValue)) throw err;
      return fail(`ConfigMap ${ref}: ${err.message}`);
    }
    return { fastcgi: { index, params } };
  },
};
