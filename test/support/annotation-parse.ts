// One Ingress of namespace `shop` parsed by every annotation group against a store holding the
// given Secrets and ConfigMaps: the helpers of the annotation groups' unit tests.
import type { AddressPolicy } from '../../src/model/checks/address-policy.js';
import { parseAnnotations } from '../../src/model/ingress/annotations/index.js';
import { defaultSettings } from '../../src/model/core/config/parse.js';
import type { NginxSettings } from '../../src/model/core/config/settings.js';
import type { ConfigMap, Ingress, Secret } from '../../src/store/kube-types.js';
import type { StoreReader } from '../../src/store/types.js';

export const P = 'nginx.ingress.kubernetes.io';

/** A Secret whose data are these texts (base64-encoded as the API server holds them). */
export function secret(name: string, data: Record<string, string>, ns = 'shop'): Secret {
  return { metadata: { name, namespace: ns }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) };
}

export function storeWith(secrets: Secret[], configMaps: ConfigMap[] = []): StoreReader {
  const byKey = new Map(secrets.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
  const cms = new Map(configMaps.map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c]));
  return { getSecret: (k: string) => byKey.get(k), getService: () => undefined, getConfigMap: (k: string) => cms.get(k) } as unknown as StoreReader;
}

/** Ingress shop/web with these annotations (unprefixed keys), parsed. */
export function parse(ann: Record<string, string>, secrets: Secret[] = [], settings: Partial<NginxSettings> = {}, configMaps: ConfigMap[] = [], addressPolicy?: AddressPolicy) {
  const ing: Ingress = {
    metadata: { name: 'web', namespace: 'shop', annotations: Object.fromEntries(Object.entries(ann).map(([k, v]) => [`${P}/${k}`, v])) },
    spec: {},
  };
  return parseAnnotations(ing, { prefix: P, settings: { ...defaultSettings(), ...settings }, store: storeWith(secrets, configMaps), ...(addressPolicy ? { addressPolicy } : {}) });
}

/** The annotation keys (unprefixed) the warnings name, sorted, once each. */
export const warnedKeys = (ws: { field: string }[]): string[] => [...new Set(ws.map((w) => w.field.replace(`metadata.annotations["${P}/`, '').replace('"]', '')))].sort();
