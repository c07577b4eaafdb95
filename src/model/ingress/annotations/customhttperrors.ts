// custom-http-errors group: status codes the default backend answers instead of the upstream,
// and disable-proxy-intercept-errors, which leaves the upstream's own answers with those codes.
import { bool, commaList, errorPageCode } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const statusCodes = commaList(errorPageCode);

const keys = { 'custom-http-errors': 'Low', 'disable-proxy-intercept-errors': 'Low' } as const;

export interface CustomHttpErrorsValue {
  readonly customHttpErrors: readonly number[];
  /** The upstream's answers pass as they are; only NGINX's own errors (502, 504) go to the error pages. */
  readonly disableProxyInterceptErrors: boolean;
}

const fields = { customHttpErrors: 'location', disableProxyInterceptErrors: 'location' } as const;

export const customHttpErrorsGroup: AnnotationGroup<CustomHttpErrorsValue, typeof fields> = {
  name: 'customhttperrors',
  keys,
  fields,
  docs: {
    'custom-http-errors': { values: 'comma-separated status codes 300..599 (error_page)', default: 'ConfigMap custom-http-errors', description: 'Responses with these codes are answered by the default backend.' },
    'disable-proxy-intercept-errors': { values: '"true" or "false"', default: 'ConfigMap disable-proxy-intercept-errors', description: "With custom-http-errors, the upstream's answers with those codes reach the client as they are (no proxy_intercept_errors); NGINX's own errors still get the error page." },
  },
  perRequest: ({ customHttpErrors }) => (customHttpErrors.length === 0 ? null : 'custom-http-errors needs error_page and internal locations'),
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    return {
      customHttpErrors: r.get('custom-http-errors', statusCodes, [...ctx.settings.customHttpErrors]),
      disableProxyInterceptErrors: r.get('disable-proxy-intercept-errors', bool, ctx.settings.disableProxyInterceptErrors),
    };
  },
};
