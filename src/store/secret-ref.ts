// How an annotation names a Secret: `name` (the Ingress's namespace) or `namespace/name`. The
// store indexes references with it, and the annotation parsers validate with it.

const DNS_SUBDOMAIN = '[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?';
const SECRET_REF = new RegExp(`^(?:(${DNS_SUBDOMAIN})/)?(${DNS_SUBDOMAIN})$`);

/** `namespace/name` of the Secret a reference names, or undefined when it names none. */
export function secretRef(raw: string | undefined, namespace: string): string | undefined {
  const m = SECRET_REF.exec((raw ?? '').trim());
  if (!m) return undefined;
  return `${m[1] ?? namespace}/${m[3]}`;
}
