// Checks of ConfigMap values that only the main ConfigMap sets: addresses the listeners bind to,
// log destinations and parameters, process settings and the operator's snippets. Each gives a
// typed value NGINX accepts, or an InvalidValue saying why (the key keeps its default).
import { isIPv4, isIPv6 } from 'node:net';
import { operatorSnippetProblem, type SnippetContext } from '../../checks/snippet-check.js';
import {
  cidr, commaList, errorPageCode, InvalidValue, MAX_VALUE_LENGTH, parseNginxTime, pcreRegex, preview, sizeBytes, type Check,
} from '../../checks/validate.js';

/** An IPv4 or IPv6 address (no network), as written. */
export const ipAddress: Check<string> = (raw) => {
  const v = raw.trim().replace(/^\[(.*)\]$/, '$1');
  if (!isIPv4(v) && !isIPv6(v)) throw new InvalidValue(`"${preview(raw)}" is not an IP address`);
  return v;
};

export const ipAddressList: Check<string[]> = commaList(ipAddress);
export const cidrs: Check<string[]> = commaList(cidr);

/**
 * A syslog server: an IP address. ingress-nginx also takes a name, but NGINX resolves it once, when
 * it loads the configuration, and refuses the whole reload if it cannot.
 */
export const syslogHost: Check<string> = (raw) => {
  const v = raw.trim();
  if (v === '') return '';
  if (!isIPv4(v) && !isIPv6(v.replace(/^\[(.*)\]$/, '$1'))) throw new InvalidValue(`"${preview(raw)}" is not an IP address (NGINX would resolve a name only at load, and fail the reload if it cannot): use the syslog Service's cluster IP`);
  return v.replace(/^\[(.*)\]$/, '$1');
};

/** worker_cpu_affinity: `auto`, `auto <mask>`, or one mask of 0s and 1s per worker (at most 64 CPUs). */
export const workerCpuAffinity: Check<string> = (raw) => {
  const parts = raw.trim().split(/\s+/).filter((p) => p !== '');
  if (parts.length === 0) return '';
  const auto = parts[0] === 'auto';
  const masks = auto ? parts.slice(1) : parts;
  if ((auto && masks.length > 1) || masks.length > 1024 || !masks.every((m) => /^[01]{1,64}$/.test(m) && m.includes('1'))) {
    throw new InvalidValue(`"${preview(raw)}" is not "auto", "auto <mask>" or CPU masks of 0s and 1s naming a CPU each (at most 64 CPUs)`);
  }
  return parts.join(' ');
};

/** ingress-nginx's limits: at most 100 dictionaries of at most 200 MB. */
const MAX_DICT_KB = 204_800;
const MAX_DICTS = 100;

/**
 * lua-shared-dicts: `name: size, ...`, a size in MB by default or with k/m (ingress-nginx's
 * reading), in KB. An entry that is not one, too big, or past the 100th dictionary is left out
 * with a warning and the others apply (a built-in dictionary keeps its size), as in ingress-nginx.
 */
export const luaSharedDicts: Check<Record<string, number>> = (raw, warn = () => {}) => {
  const out: Record<string, number> = {};
  for (const entry of raw.split(',').map((e) => e.replace(/\s+/g, '')).filter((e) => e !== '')) {
    const m = /^([A-Za-z0-9_]{1,64}):(\d{1,9})([kKmM]?)$/.exec(entry);
    if (!m) {
      warn(`"${preview(entry)}" is not "name: size" (a name of letters, digits and _, a size in MB or with k/m); left out`);
      continue;
    }
    const kb = Number(m[2]) * (m[3]!.toLowerCase() === 'k' ? 1 : 1024);
    if (kb < 1 || kb > MAX_DICT_KB) warn(`dictionary ${m[1]}: ${m[2]}${m[3]} is not between 1k and 200m; left out`);
    else if (!(m[1]! in out) && Object.keys(out).length >= MAX_DICTS) warn(`dictionary ${m[1]}: more than ${MAX_DICTS} dictionaries; left out`);
    else out[m[1]!] = kb;
  }
  return out;
};

/**
 * custom-http-errors: a code that is not one `error_page` takes is left out with a warning, the
 * others apply (as ingress-nginx skips what does not parse or lies outside 300..599).
 */
export const customErrorCodes: Check<number[]> = (raw, warn = () => {}) => {
  const out: number[] = [];
  for (const code of commaList((v) => v)(raw)) {
    try {
      out.push(errorPageCode(code));
    } catch (err) {
      if (!(err instanceof InvalidValue)) throw err;
      warn(`${err.message}; left out`);
    }
  }
  return out;
};

/**
 * access-log-params: the access_log parameters NGINX takes after the format, but `if=` (the
 * controller's own: skip-access-log-urls). `flush` needs a buffer (gzip makes one).
 */
export const accessLogParams: Check<string> = (raw) => {
  const params = raw.trim().split(/\s+/).filter((p) => p !== '');
  let buffer = false;
  let flush = false;
  for (const p of params) {
    const [name, value] = p.split(/=(.*)/s) as [string, string | undefined];
    if (name === 'buffer' && value !== undefined && (sizeBytes(value, 'km') ?? 0n) > 0n) buffer = true;
    else if (name === 'gzip' && (value === undefined || /^[1-9]$/.test(value))) buffer = true;
    else if (name === 'flush' && value !== undefined && (parseNginxTime(value, 'msec') ?? 0n) > 0n) flush = true;
    else throw new InvalidValue(`"${preview(p)}" is not buffer=<size>, gzip[=1..9] or flush=<time>`);
  }
  if (flush && !buffer) throw new InvalidValue('flush= needs buffer= (or gzip)');
  return params.join(' ');
};

/** gzip_disable: `msie6`, `degradation` or a regular expression of User-Agents (NGINX matches it caseless). */
export const gzipDisable: Check<string> = (raw) => {
  const v = raw.trim();
  if (v === '' || v === 'msie6' || v === 'degradation') return v;
  return pcreRegex({ caseless: true })(v);
};

/** A MIME type, `type/subtype` (default_type). */
export const mimeType: Check<string> = (raw) => {
  const v = raw.trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/.test(v) || v.includes('$')) {
    throw new InvalidValue(`"${preview(raw)}" is not a MIME type (type/subtype)`);
  }
  return v;
};

/** A key made only of NGINX variables, e.g. `$binary_remote_addr` or `$binary_remote_addr$http_x_user`. */
export const variablesKey: Check<string> = (raw) => {
  const v = raw.trim();
  if (v.length > 256 || !/^(\$[A-Za-z_][A-Za-z0-9_]*)+$/.test(v)) throw new InvalidValue(`"${preview(raw)}" is not a sequence of NGINX variables (e.g. $binary_remote_addr)`);
  return v;
};

/** The operator's NGINX directives for one context: read as NGINX will read them (../../checks/snippet-check.ts). */
export function operatorSnippet(context: SnippetContext): Check<string> {
  return (raw) => {
    if (raw.length > 16 * MAX_VALUE_LENGTH) throw new InvalidValue(`snippet is ${raw.length} characters long (at most ${16 * MAX_VALUE_LENGTH})`);
    const ctrl = /[\u0000-\u0008\u000b-\u001f\u007f]/.exec(raw);
    if (ctrl) throw new InvalidValue(`snippet contains the control character \\x${ctrl[0].charCodeAt(0).toString(16).padStart(2, '0')}`);
    const problem = operatorSnippetProblem(raw, context);
    if (problem) throw new InvalidValue(`snippet ${problem}`);
    return raw;
  };
}
