// connection group: the Connection header sent to the backend.
import { InvalidValue, type Check } from '../../checks/validate.js';
import { annotationReader } from './reader.js';
import type { AnnotationGroup } from './types.js';

const keys = { 'connection-proxy-header': 'Low' } as const;

const connectionTokens: Check<string> = (raw) => {
  const v = raw.trim();
  if (!/^[A-Za-z0-9-]{1,64}(\s*,\s*[A-Za-z0-9-]{1,64}){0,16}$/.test(v)) {
    throw new InvalidValue('connection-proxy-header must be comma-separated tokens (e.g. keep-alive, close)');
  }
  return v;
};

export interface ConnectionValue {
  readonly connectionHeader: string;
}

const fields = { connectionHeader: 'location' } as const;

export const connectionGroup: AnnotationGroup<ConnectionValue, typeof fields> = {
  name: 'connection',
  keys,
  fields,
  docs: {
    'connection-proxy-header': { values: 'comma-separated tokens, e.g. `keep-alive`', default: "'' (NGINX's own)", description: 'Value of the Connection header sent to the backend.' },
  },
  perRequest: () => null,
  parse(ing, ctx, warn) {
    return { connectionHeader: annotationReader(ing, ctx, keys, warn).get('connection-proxy-header', connectionTokens, '') };
  },
};
