// custom-http-errors group: status codes the default backend answers instead of the upstream.
import { commaList, statusCode } from '../validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const statusCodes = commaList(statusCode);

const keys = { 'custom-http-errors': 'Low' } as const;

export const customHttpErrorsGroup: AnnotationGroup<'customHttpErrors'> = {
  name: 'customhttperrors',
  keys,
  docs: {
    'custom-http-errors': { values: 'comma-separated status codes', default: 'ConfigMap custom-http-errors', description: 'Responses with these codes are answered by the default backend.' },
  },
  parse(ing, ctx, warn) {
    const r = annotationReader(ing, ctx, keys, warn);
    return { customHttpErrors: r.get('custom-http-errors', statusCodes, [...ctx.settings.customHttpErrors]) };
  },
};
