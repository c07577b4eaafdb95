// Parses the main ConfigMap's data into typed NginxSettings, with a warning naming the key for
// every unknown key or invalid value (which keeps its default).
import type { StoreReader } from '../../../store/types.js';
import type { ModelWarning } from '../types.js';
import type { Secret } from '../../../store/kube-types.js';
import { InvalidValue, preview, type Check } from '../../checks/validate.js';
import { defaultSettings } from './defaults.js';
import { CONFIGMAP_KEYS, headersFromConfigMap } from './keys.js';
import { crossCheck } from './cross-checks.js';
import type { NginxSettings } from './settings.js';
import { unsupportedConfigMapKeyMessage } from '../refused.js';

export { defaultSettings, CONFIGMAP_KEYS };

export interface ConfigMapContext {
  /** e.g. `ConfigMap ingress-nginx/ingress-nginx-controller`. */
  object: string;
  /** For keys naming other ConfigMaps (add-headers, proxy-set-headers). */
  store?: StoreReader;
}

const BY_KEY = new Map(CONFIGMAP_KEYS.map((k) => [k.key, k]));

export function parseConfigMap(
  data: Record<string, string> | undefined,
  ctx: ConfigMapContext,
): { settings: NginxSettings; warnings: ModelWarning[] } {
  const settings = defaultSettings();
  const warnings: ModelWarning[] = [];
  const warn = (key: string, message: string): void => {
    warnings.push({ object: ctx.object, field: `data["${key}"]`, message });
  };
  const target = settings as unknown as Record<string, unknown>;

  for (const [key, value] of Object.entries(data ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const spec = BY_KEY.get(key);
    if (spec === undefined) {
      warn(key, unsupportedConfigMapKeyMessage(key));
      continue;
    }
    // A manifest written by hand may hold an unquoted number or boolean; the API server would
    // refuse it, but its meaning is plain.
    const raw: unknown = value;
    if (typeof raw !== 'string' && typeof raw !== 'number' && typeof raw !== 'boolean') {
      warn(key, 'value is not a string; default kept');
      continue;
    }
    const text = String(raw);
    if (spec.kind === 'headers') {
      target[spec.field] = headersFromConfigMap(text, ctx.store, (m) => warn(key, m));
      continue;
    }
    if (spec.kind === 'secret') {
      if (text.trim() === '') continue;
      try {
        target[spec.field] = fromSecret(text, ctx.store, spec.read);
      } catch (err) {
        if (!(err instanceof InvalidValue)) throw err;
        warn(key, `${err.message}; default ${spec.defaultText} kept`);
      }
      continue;
    }
    try {
      target[spec.field] = (spec.check as Check<unknown>)(text, (m) => warn(key, m));
    } catch (err) {
      if (!(err instanceof InvalidValue)) throw err;
      warn(key, `${err.message}; default ${describe(target[spec.field])} kept`);
    }
  }
  crossCheck(settings, warn);
  return { settings, warnings };
}

/** The value a key naming a Secret (`namespace/name`) takes from it. */
function fromSecret(raw: string, store: StoreReader | undefined, read: (secret: Secret, ref: string) => unknown): unknown {
  const ref = raw.trim();
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?\/[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(ref)) throw new InvalidValue(`"${preview(ref)}" is not namespace/name of a Secret`);
  const secret = store?.getSecret(ref);
  if (secret === undefined) throw new InvalidValue(`Secret ${ref} not found`);
  return read(secret, ref);
}

function describe(value: unknown): string {
  const text = Array.isArray(value) ? value.join(',') : String(value);
  return text.length > 40 ? `"${text.slice(0, 40)}…"` : `"${text}"`;
}
