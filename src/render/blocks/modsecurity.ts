// modsecurity group: the ModSecurity directives, as ingress-nginx prints them: at http level from the ConfigMap
// (enable-modsecurity, enable-owasp-modsecurity-crs, modsecurity-snippet), per location from the
// Ingress's annotations over those, `modsecurity off` in internal locations and the control
// server, and the module loaded only when something uses it. The base configuration and the Core
// Rule Set loader are files written beside nginx.conf (ingress-nginx's
// /etc/nginx/modsecurity/modsecurity.conf and owasp-modsecurity-crs/nginx-modsecurity.conf).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Configuration, Location, Server } from '../../model/core/types.js';
import type { NginxSettings } from '../../model/core/config/settings.js';
import * as f from '../filters.js';
import type { NginxRuntime } from '../runtime.js';
import { I } from './layout.js';
import type { AuxiliaryFile, RenderBlock } from './types.js';

export const MODSECURITY_MODULE = 'ngx_http_modsecurity_module.so';
/** Debian's modsecurity-crs: the setup and exclusion files it lets the operator edit, and the rules. */
export const CRS_FILES = {
  setup: '/etc/modsecurity/crs/crs-setup.conf',
  before: '/etc/modsecurity/crs/REQUEST-900-EXCLUSION-RULES-BEFORE-CRS.conf',
  rules: '/usr/share/modsecurity-crs/rules',
  after: '/etc/modsecurity/crs/RESPONSE-999-EXCLUSION-RULES-AFTER-CRS.conf',
};

export function modsecurityPaths(rt: NginxRuntime): { base: string; crs: string; auditLog: string } {
  const dir = join(rt.prefix, 'modsecurity');
  return { base: join(dir, 'modsecurity.conf'), crs: join(dir, 'owasp-crs.conf'), auditLog: join(rt.prefix, 'logs', 'modsec_audit.log') };
}

/** What nginx.conf needs at http level. */
export interface ModSecurityHttp {
  /** Load the module. */
  load: boolean;
  /** `modsecurity on` at http level (the ConfigMap's enable-modsecurity). */
  on: boolean;
  /** Directives at http level. */
  http: string;
  /** The Core Rule Set loader is used (its file must be written). */
  crs: boolean;
  warnings: string[];
}

/** Whether ModSecurity inspects a location's requests (the ConfigMap, then its annotation). */
const onIn = (loc: Location, s: NginxSettings): boolean => (loc.settings.modsecurity?.enable ?? s.enableModsecurity) === true;

/** Whether a location asks for the Core Rule Set itself (ingress-nginx: only where the ConfigMap does not give it). */
const crsIn = (loc: Location, s: NginxSettings): boolean => loc.settings.modsecurity?.owaspRules === true && !s.enableOwaspModsecurityCrs && onIn(loc, s);

const moduleInstalled = (rt: NginxRuntime): boolean => existsSync(join(rt.modulesDir, MODSECURITY_MODULE));
const crsInstalled = (): boolean => existsSync(CRS_FILES.rules);

/**
 * The Core Rule Set of enable-owasp-core-rules, parsed once at http level instead of once per
 * location as ingress-nginx does (measured: 50 ms and 16 MB of NGINX's memory per location, its
 * issues #4722 and #12927): every phase skips it unless the location's own rules, which
 * ModSecurity runs before the inherited ones, set this transaction variable. The location's rules
 * still come first and the Core Rule Set after them, the order ingress-nginx gives one location.
 */
const CRS_OPT_IN = 'tx.ingress_rx_crs';
const CRS_END = 'INGRESS-RX-END-CRS';
const CRS_GUARDS = [1, 2, 3, 4, 5]
  .map((phase) => `SecRule &${CRS_OPT_IN.toUpperCase().replace('.', ':')} "@eq 0" "id:199000${phase},phase:${phase},pass,nolog,skipAfter:${CRS_END}"`).join('\n');
const CRS_OPT_IN_RULE = `SecAction "id:1990000,phase:1,pass,nolog,setvar:${CRS_OPT_IN}=1"`;

/** What a server's locations ask of the http level: the module (an annotation turns it on), the Core Rule Set (one asks for it itself). */
export interface ModSecurityUse { readonly load: boolean; readonly crs: boolean }

const NO_USE: ModSecurityUse = { load: false, crs: false };

export function modsecurityUseOf(server: Server, s: NginxSettings): ModSecurityUse {
  let load = false;
  let crs = false;
  for (const loc of server.locations) {
    if (!loc.settings.modsecurity) continue;
    if (loc.settings.modsecurity.enable === true) load = true;
    if (crsIn(loc, s)) crs = true;
  }
  return load || crs ? { load, crs } : NO_USE;
}

/** What the servers' locations ask for together. */
export function modsecurityUseOfAll(servers: readonly Server[], s: NginxSettings): ModSecurityUse {
  let load = false;
  let crs = false;
  for (const server of servers) {
    const use = modsecurityUseOf(server, s);
    load ||= use.load;
    crs ||= use.crs;
  }
  return { load, crs };
}

/** `used`: what the servers ask for (the renderer has it memoised per Server object). */
export function modsecurityHttp(config: Configuration, rt: NginxRuntime, used = modsecurityUseOfAll(config.servers, config.settings)): ModSecurityHttp {
  const s = config.settings;
  const load = s.enableModsecurity || used.load;
  let crsPerIngress = used.crs;
  const warnings: string[] = [];
  if (load && !moduleInstalled(rt)) {
    warnings.push(`ModSecurity is asked for but ${join(rt.modulesDir, MODSECURITY_MODULE)} is not installed (Debian: libnginx-mod-http-modsecurity): no request is inspected`);
    return { load: false, on: false, http: '', crs: false, warnings };
  }
  let crsForAll = s.enableModsecurity && s.enableOwaspModsecurityCrs;
  if ((crsForAll || crsPerIngress) && !crsInstalled()) {
    warnings.push(`the OWASP Core Rule Set is asked for but ${CRS_FILES.rules} is not installed (Debian: modsecurity-crs): ModSecurity runs without it`);
    crsForAll = crsPerIngress = false;
  }
  const { base, crs: crsPath } = modsecurityPaths(rt);
  const crsFile = `    modsecurity_rules_file ${f.quoteLiteral(crsPath, 'runtime.prefix')};\n`;
  let http = '';
  if (s.enableModsecurity) {
    http += '    modsecurity on;\n';
    http += s.modsecuritySnippet.length > 0
      ? s.modsecuritySnippet.map((r) => `    modsecurity_rules ${f.modsecurityRules(r, 'modsecurity-snippet', { tenant: false })};\n`).join('')
      : `    modsecurity_rules_file ${f.quoteLiteral(base, 'runtime.prefix')};\n`;
    if (crsForAll) http += crsFile;
  }
  if (crsPerIngress) {
    http += '    # The Core Rule Set for the locations that ask for it (enable-owasp-core-rules), parsed once.\n'
      + `    modsecurity_rules ${f.modsecurityRules(CRS_GUARDS, 'modsecurity', { tenant: false })};\n${crsFile}`
      + `    modsecurity_rules ${f.modsecurityRules(`SecMarker ${CRS_END}`, 'modsecurity', { tenant: false })};\n`;
  }
  return { load, on: s.enableModsecurity, http, crs: crsForAll || crsPerIngress, warnings };
}

/**
 * A location's directives (each line indented by `indent`): nothing when neither the ConfigMap
 * nor the annotation turns ModSecurity on; `modsecurity off` when the annotation says false;
 * else the location's own rules over the http-level ones.
 */
function modsecurityLocation(loc: Location, s: NginxSettings, rt: NginxRuntime, indent: string): string {
  const m = loc.settings.modsecurity;
  if (m === null) return '';
  if (!s.enableModsecurity && m.enable !== true) return '';
  if (!moduleInstalled(rt)) return ''; // warned at http level
  if (m.enable === false) return `${indent}modsecurity off;\n`;
  let out = '';
  if (!s.enableModsecurity) out += `${indent}modsecurity on;\n`;
  for (const r of m.rules) out += `${indent}modsecurity_rules ${f.modsecurityRules(r)};\n`;
  if (m.transactionId !== '') out += `${indent}modsecurity_transaction_id ${f.quoteWithVariables(m.transactionId, 'modsecurity-transaction-id')};\n`;
  if (!s.enableModsecurity && m.rules.length === 0) out += `${indent}modsecurity_rules_file ${f.quoteLiteral(modsecurityPaths(rt).base, 'runtime.prefix')};\n`;
  if (crsIn(loc, s) && crsInstalled()) out += `${indent}modsecurity_rules ${f.modsecurityRules(CRS_OPT_IN_RULE, 'enable-owasp-core-rules', { tenant: false })};\n`;
  return out;
}

export const modsecurityBlock: RenderBlock = {
  group: 'modsecurity',
  applied: 'directives',
  location: {
    access: ({ loc, settings, runtime }) => modsecurityLocation(loc, settings, runtime, I),
  },
};

/** `modsecurity off` for internal locations (auth subrequests, error pages), as ingress-nginx. */
export function modsecurityOff(s: NginxSettings): string[] {
  return s.enableModsecurity ? ['modsecurity off'] : [];
}

/** The files ModSecurity reads beside nginx.conf, when the configuration loads the module. */
export function modsecurityFiles(used: ModSecurityHttp, rt: NginxRuntime): AuxiliaryFile[] {
  if (!used.load) return [];
  const p = modsecurityPaths(rt);
  const files = [{ path: p.base, content: baseConfiguration(p.auditLog) }];
  if (used.crs) files.push({ path: p.crs, content: crsLoader() });
  return files;
}

/** ModSecurity's configuration where the operator gives none: inspect, but only detect (as ingress-nginx ships it). */
function baseConfiguration(auditLog: string): string {
  // ModSecurity reads a path as letters, digits and _/.-; any other prefix logs to NGINX's error log only.
  const audit = /^[0-9A-Za-z_/.-]+$/.test(auditLog)
    ? ['SecAuditEngine RelevantOnly', 'SecAuditLogRelevantStatus "^(?:5|4(?!04))"', 'SecAuditLogParts ABIJDEFHZ', 'SecAuditLogType Serial', `SecAuditLog ${auditLog}`]
    : ['SecAuditEngine Off'];
  return [
    '# Written by ingress-rx: ModSecurity where modsecurity-snippet gives no configuration.',
    '# Detection only, as ingress-nginx ships it: matches are logged (NGINX error log, audit log),',
    '# nothing is blocked until a modsecurity-snippet says `SecRuleEngine On`.',
    'SecRuleEngine DetectionOnly',
    'SecRequestBodyAccess On',
    'SecRule REQUEST_HEADERS:Content-Type "^(?:application(?:/soap\\+|/)|text/)xml" "id:200000,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=XML"',
    'SecRule REQUEST_HEADERS:Content-Type "^application/json" "id:200001,phase:1,t:none,t:lowercase,pass,nolog,ctl:requestBodyProcessor=JSON"',
    'SecRequestBodyLimit 13107200',
    'SecRequestBodyNoFilesLimit 131072',
    'SecRequestBodyLimitAction Reject',
    'SecRule REQBODY_ERROR "!@eq 0" "id:200002,phase:2,t:none,log,deny,status:400,msg:\'Failed to parse request body.\',logdata:\'%{reqbody_error_msg}\',severity:2"',
    'SecRule MULTIPART_STRICT_ERROR "!@eq 0" "id:200003,phase:2,t:none,log,deny,status:400,msg:\'Multipart request body failed strict validation\'"',
    'SecRule MULTIPART_UNMATCHED_BOUNDARY "@eq 1" "id:200004,phase:2,t:none,log,deny,msg:\'Multipart parser detected a possible unmatched boundary.\'"',
    'SecPcreMatchLimit 1000',
    'SecPcreMatchLimitRecursion 1000',
    'SecRule TX:/^MSC_/ "!@streq 0" "id:200005,phase:2,t:none,deny,msg:\'ModSecurity internal error flagged: %{MATCHED_VAR_NAME}\'"',
    'SecResponseBodyAccess On',
    'SecResponseBodyMimeType text/plain text/html text/xml',
    'SecResponseBodyLimit 524288',
    'SecResponseBodyLimitAction ProcessPartial',
    ...audit,
    'SecArgumentSeparator &',
    'SecCookieFormat 0',
    '',
  ].join('\n');
}

/** The Core Rule Set in its order: setup, exclusions before, the rules, exclusions after. */
function crsLoader(): string {
  return [
    "# Written by ingress-rx: the OWASP Core Rule Set from Debian's modsecurity-crs.",
    `Include ${CRS_FILES.setup}`,
    `Include ${CRS_FILES.before}`,
    `Include ${CRS_FILES.rules}/*.conf`,
    `Include ${CRS_FILES.after}`,
    '',
  ].join('\n');
}
