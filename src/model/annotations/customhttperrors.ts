// custom-http-errors group: status codes the default backend answers instead of the upstream.
import { commaList, errorPageCode } from '../validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const statusCodes = commaList(errorPageCode);

const keys = { 'custom-http-errors': 'Low' } as const;

export interface CustomHttpErrorsValue {
  readonly customHttpErrors: readonly number[];
}

const fields = { customHttpErrors: 'location' } as const;

export const customHttpErrorsGroup: AnnotationGroup<CustomHttpErrorsValue, typeof fields> = {
  name: 'customhttperrors',
  keys,
  fields,
  docs: {
    'custom-http-errors': { values: 'comma-separated status codes 300..599 (error_page)', default: 'ConfigMap custom-http-errors', description: 'Responses with these codes are answered by the default backend.' },
  },
  perRequest: ({ customHttpErrors }) => (customHttpErrors.length === 0 ? null : 'custom-http-errors needs error_page and internal locations'),
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    return { customHttpErrors: r.get('custom-http-errors', statusCodes, [...ctx.settings.customHttpErrors]) };
  },
};
