// custom-headers group: response headers of the Ingress's locations, from a ConfigMap the
// annotation names (header → value). Every header must be one the operator allowed in
// global-allowed-response-headers; any problem denies the locations (503), as in ingress-nginx.
import { secretRef } from '../../../store/secret-ref.js';
import { headerName, InvalidValue, MAX_VALUE_LENGTH, preview, type Check } from '../../checks/validate.js';
import type { NginxSettings } from '../../core/config/settings.js';
import { annotationReader } from './reader.js';
import { responseHeadersPerRequest } from './response-headers.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'custom-headers': 'Medium' } as const;

/** `name` or `namespace/name` of a ConfigMap, as `namespace/name` (the namespace is filled in later). */
const configMapReference: Check<string> = (raw) => {
  const ref = secretRef(raw, '');
  if (ref === undefined) throw new InvalidValue('custom-headers must be `name` or `namespace/name` of a ConfigMap');
  return ref;
};

/** A header value: printed as a literal (`$` included), so only control characters are refused. */
function headerValue(name: string, value: string): string {
  if (value.length > MAX_VALUE_LENGTH) throw new InvalidValue(`the value of ${name} is ${value.length} characters long (at most ${MAX_VALUE_LENGTH})`);
  if (/[\u0000-\u001f\u007f]/.test(value)) throw new InvalidValue(`the value of ${name} holds a control character`);
  return value;
}

// Headers NGINX keeps apart from the others (headers-more and Lua each set them their own way).
const BUILT_IN = new Set(['server', 'date', 'content-length', 'content-type', 'content-encoding', 'last-modified', 'location', 'refresh',
  'accept-ranges', 'www-authenticate', 'expires', 'etag', 'cache-control', 'link', 'connection', 'keep-alive', 'transfer-encoding', 'set-cookie']);

/** Why the Lua router cannot set these headers as more_set_headers would, or null. */
function customHeadersPerRequest(headers: Readonly<Record<string, string>>, s: NginxSettings): string | null {
  for (const [name, value] of Object.entries(headers)) {
    if (BUILT_IN.has(name.toLowerCase())) return `custom-headers sets ${name}, a header NGINX sets itself`;
    // more_set_headers trims the value and clears the header when nothing is left.
    if (value.trim() !== value || value === '') return `custom-headers ${name}: an empty value or one with surrounding spaces is NGINX's to trim`;
  }
  return responseHeadersPerRequest('custom-headers', Object.keys(headers), s);
}

export interface CustomHeadersValue {
  /** Header → value (literal), in name order; null without the annotation. */
  readonly customHeaders: Readonly<Record<string, string>> | null;
}

const fields = { customHeaders: 'location' } as const;

export const customHeadersGroup: AnnotationGroup<CustomHeadersValue, typeof fields> = {
  name: 'customheaders',
  keys,
  fields,
  configMaps: ['custom-headers'],
  perRequest: ({ customHeaders }, s) => (customHeaders === null ? null : customHeadersPerRequest(customHeaders, s)),
  docs: {
    'custom-headers': {
      values: '`name` or `namespace/name` of a ConfigMap (another namespace only with allow-cross-namespace-resources)',
      default: 'none',
      description: 'Response headers of the locations: the ConfigMap\'s data, header → value (sent as written, `$` included). Each header must be listed in the ConfigMap key global-allowed-response-headers.',
      onInvalid: 'warning; the location is denied (503) — also when the ConfigMap is missing, or holds a header that is invalid or not allowed',
    },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    const read = r.read('custom-headers', configMapReference);
    if (read.state === 'absent') return { customHeaders: null };
    const deny = (message: string) => ({ customHeaders: null, denied: `custom-headers: ${message}` });
    if (read.state === 'invalid') return deny(read.message);
    const namespace = ing.metadata.namespace ?? 'default';
    const ref = read.value.startsWith('/') ? `${namespace}${read.value}` : read.value;
    if (!ref.startsWith(`${namespace}/`) && !ctx.settings.allowCrossNamespaceResources) {
      const message = `ConfigMap ${ref} is in another namespace (allow-cross-namespace-resources is false)`;
      r.warn('custom-headers', message);
      return deny(message);
    }
    const cm = ctx.store.getConfigMap(ref);
    if (cm === undefined) {
      r.warn('custom-headers', `ConfigMap ${ref} not found`);
      return deny(`ConfigMap ${ref} not found`);
    }
    const allowed = new Set(ctx.settings.globalAllowedResponseHeaders);
    const headers: Record<string, string> = {};
    try {
      for (const [name, value] of Object.entries(cm.data ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const header = headerName(name);
        if (!allowed.has(header)) throw new InvalidValue(`header ${preview(header)} is not in global-allowed-response-headers`);
        headers[header] = headerValue(header, value);
      }
    } catch (err) {
      if (!(err instanceof InvalidValue)) throw err;
      r.warn('custom-headers', `ConfigMap ${ref}: ${err.message}`);
      return deny(`ConfigMap ${ref}: ${err.message}`);
    }
    return { customHeaders: headers };
  },
};
