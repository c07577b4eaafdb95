// Which of the model's warnings refuse an Ingress (the webhook denies it, `lint` fails) and which
// only warn. The model decides what is wrong; this table only decides how hard to say it.
import type { ModelWarning } from '../model/core/types.js';
import { UNSUPPORTED_ANNOTATION, UNSUPPORTED_CONFIGMAP_KEY } from '../model/core/refused.js';
import { HTTP2_FAILURE } from '../model/checks/http2.js';
import { GRPC_CLEARTEXT } from '../model/ingress/annotations/backendprotocol.js';
import { DEEP_INSPECTION_WARNING } from '../model/core/paths.js';
import { L4_EXTERNAL_NAME_REFUSED } from '../model/core/l4.js';
import { PASSTHROUGH_BACKEND_WARNING } from '../model/ingress/backend-plans.js';

export type Severity = 'deny' | 'warn';

/** Why a class of warnings only warns; shown in docs/admission.md and tested one by one. */
export interface WarnRule {
  name: string;
  why: string;
  matches(w: ModelWarning, ctx: VerdictContext): boolean;
}

export interface VerdictContext {
  /** The annotations of the Ingress the warning is about (none for other objects). */
  annotations: Readonly<Record<string, string>>;
}

/** The precedence warning (./review-gateway.ts) for a host an Ingress of the route's own namespace still names: a migration under way. */
export const INGRESS_HOST_SAME_NAMESPACE = 'an Ingress of this namespace, which takes precedence over HTTPRoutes on a host until it no longer names it';

const isGatewayAPI = (w: ModelWarning) => w.object.startsWith('HTTPRoute ') || w.object.startsWith('Gateway ');

/** cert-manager's ingress-shim issues a certificate for Ingresses with one of these annotations. */
const CERT_MANAGER_ANNOTATIONS = ['cert-manager.io/issuer', 'cert-manager.io/cluster-issuer'];

const isAnnotation = (w: ModelWarning) => w.field.startsWith('metadata.annotations[');
const isTLSSecret = (w: ModelWarning) => /^spec\.tls\[\d+\]\.secretName$/.test(w.field);

/**
 * Everything not matched here denies: invalid annotation values (including a risk above
 * annotations-risk-level, a blocklisted word and snippets while they are disabled), hosts and
 * paths the model drops, backends it cannot use, a host and path another Ingress already owns,
 * and a TLS Secret that exists but does not fit the host.
 */
export const WARN_RULES: readonly WarnRule[] = [
  {
    name: 'unsupported-annotation',
    why: 'ingress-rx ignores it; the Ingress works without it (what to use instead: `ingress-rx migrate-report`)',
    matches: (w) => isAnnotation(w) && UNSUPPORTED_ANNOTATION.test(w.message),
  },
  {
    name: 'unsupported-configmap-key',
    why: 'ingress-rx ignores the key; the controller runs with its default',
    matches: (w) => /^data\[/.test(w.field) && UNSUPPORTED_CONFIGMAP_KEY.test(w.message),
  },
  {
    name: 'missing-object',
    why: 'a referenced Secret, Service or ConfigMap may be created after the object naming it (kubectl apply of a directory, Helm, cert-manager); the controller picks it up when it appears',
    matches: (w) => /\bnot found\b/.test(w.message),
  },
  {
    name: 'backend-endpoints',
    why: 'Services and their endpoints change on their own; a backend without ready endpoints answers 503 until it has some',
    matches: (w) => w.field === 'spec' && /^backend \S+: Service \S+/.test(w.message),
  },
  {
    name: 'canary-pairing',
    why: 'a canary waits for its primary Ingress, which may come later; ingress-nginx accepts it too',
    matches: (w) => w.field === 'metadata.annotations' && /^canary(:| backend )/.test(w.message),
  },
  {
    name: 'alias-taken',
    why: 'the alias stays with the host that claimed it first, and a host is never an alias; the Ingress itself works (ingress-nginx accepts it too)',
    matches: (w) => isAnnotation(w) && / is (already an alias of \S+ \(Ingress \S+\)|a host of Ingress \S+ \(namespace \S+\)); ignored$/.test(w.message),
  },
  {
    name: 'cross-namespace-takeover',
    why: 'served as ingress-nginx serves it; both Ingresses are warned (Event reason Takeover), and --host-ownership refuses it instead',
    matches: (w) => w.reason === 'Takeover' && /takes traffic of /.test(w.message),
  },
  {
    name: 'backend-renamed',
    why: "another Service already has this Service's ingress-nginx backend name; this one is served under its own, injective name",
    matches: (w) => w.field === 'spec' && /^backend name \S+ of Service \S+ .* is already that of Service /.test(w.message),
  },
  {
    name: 'no-effect',
    why: 'annotations that do nothing without another one change nothing when ignored',
    matches: (w) => isAnnotation(w) && /( is ignored without |; they are ignored$)/.test(w.message),
  },
  {
    name: 'shared-backend',
    why: 'as in ingress-nginx, a backend (one per Service and port) has one set of balancing settings, taken from the Ingresses using it in a fixed order; the warning names the Ingress whose settings it takes',
    matches: (w) => w.field === 'metadata.annotations' && /^backend \S+ is shared with Ingress \S+/.test(w.message),
  },
  {
    name: 'session-cookie-path',
    why: 'ingress-nginx only logs it: the cookie works, with the Ingress path (a regular expression) as its Path',
    matches: (w) => w.field === 'metadata.annotations' && w.message.startsWith('session-cookie-path should be set when use-regex is true'),
  },
  {
    name: 'path-listed-twice',
    why: 'the Ingress repeats one of its own paths; the first is used (ingress-nginx accepts it too)',
    matches: (w) => w.field === 'spec.rules' && / is listed twice; the first one is used$/.test(w.message),
  },
  {
    name: 'regex-mode-exact',
    why: 'the Exact path is served as its pathType says; ingress-nginx would also send longer paths and other cases to it (docs/differences.md, Model)',
    matches: (w) => w.field === 'spec.rules' && / is in regex mode \(use-regex or rewrite-target\): Exact path .* matches only itself here/.test(w.message),
  },
  {
    name: 'fails-over-http2',
    why: 'HTTP/1.1 clients are served; HTTP/2 clients fail where it applies (a Lua API lua-nginx-module refuses in HTTP/2 requests, TLS settings HTTP/2 clients refuse), so the warning says so before browsers find it',
    matches: (w) => w.message.startsWith(HTTP2_FAILURE),
  },
  {
    name: 'grpc-cleartext',
    why: 'gRPC over TLS is served; a client that spoke cleartext HTTP/2 to ingress-nginx\'s HTTP port must move to TLS (NGINX 1.22 serves HTTP/2 only over TLS)',
    matches: (w) => isAnnotation(w) && w.message.startsWith(GRPC_CLEARTEXT),
  },
  {
    name: 'deep-inspection',
    why: 'the path is served (escaped, never a file path); ingress-nginx refuses the whole Ingress for it (--deep-inspect), so the warning says so before traffic moves (docs/differences.md, Model)',
    matches: (w) => w.message.startsWith(DEEP_INSPECTION_WARNING),
  },
  {
    name: 'passthrough-backend-protocol',
    why: 'the Ingress is served with the backend-protocol it says; ingress-nginx silently proxies HTTPS to a Service an ssl-passthrough host uses, so the warning says so before traffic moves (docs/differences.md, NGINX configuration)',
    matches: (w) => w.field === 'metadata.annotations' && /^backend \S+ /.test(w.message) && w.message.includes(PASSTHROUGH_BACKEND_WARNING),
  },
  {
    name: 'l4-external-name',
    why: 'the TCP/UDP services entry is left without endpoints, the others are served; ingress-nginx resolves the ExternalName host name in its stream Lua, ingress-rx has none and takes only an address (docs/differences.md, NGINX configuration)',
    matches: (w) => /^data\[/.test(w.field) && w.message.endsWith(L4_EXTERNAL_NAME_REFUSED),
  },
  {
    name: 'gateway-api-not-built-yet',
    why: 'a Gateway API feature ingress-rx does not serve yet (docs/gateway-api.md, Not built yet): that part is set aside and the rest is served',
    matches: (w) => isGatewayAPI(w) && /( (is|are) not (served|supported) yet\b|is not served \(Terminate only\))/.test(w.message),
  },
  {
    name: 'ingress-host-migration',
    why: 'an Ingress of the HTTPRoute\'s own namespace still names the host (a migration under way): the route is served on it once the Ingress no longer names it; an Ingress of another namespace holding the host refuses the route',
    matches: (w) => w.object.startsWith('HTTPRoute ') && w.message.includes(INGRESS_HOST_SAME_NAMESPACE),
  },
  {
    name: 'routes-detached',
    why: 'a Gateway\'s owner decides which routes it takes; the warning names each HTTPRoute the change detaches and why',
    matches: (w) => w.object.startsWith('Gateway ') && /^HTTPRoute \S+ would no longer be attached: /.test(w.message),
  },
  {
    name: 'cert-manager-certificate',
    why: 'cert-manager issues or renews the Secret after it sees the Ingress, so a Secret that does not fit the host yet is expected',
    matches: (w, ctx) => isTLSSecret(w) && CERT_MANAGER_ANNOTATIONS.some((a) => ctx.annotations[a] !== undefined),
  },
];

/** The rule that makes a warning only a warning, or null: it denies. */
export function warnRuleOf(w: ModelWarning, ctx: VerdictContext): WarnRule | null {
  return WARN_RULES.find((r) => r.matches(w, ctx)) ?? null;
}

export function severityOf(w: ModelWarning, ctx: VerdictContext): Severity {
  return warnRuleOf(w, ctx) ? 'warn' : 'deny';
}

/** The warn rules as a Markdown table (docs/admission.md is checked against it). */
export function warnRulesMarkdown(): string {
  return ['| Rule | Why it only warns |', '|---|---|', ...WARN_RULES.map((r) => `| \`${r.name}\` | ${r.why} |`)].join('\n') + '\n';
}
