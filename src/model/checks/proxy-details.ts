// Checks of the proxy details an annotation and its ConfigMap default both set: the rewriting of
// Set-Cookie and Location headers, and the buffer sizes NGINX checks against each other when it
// reads a location (a combination it refuses would fail the whole reload).
import { InvalidValue, pcreRegex, preview, sizeBytes, size, type Check } from './validate.js';

/** ingress-nginx's characters for these values (letters, digits, `-._~/:`, and `,?&=` for URLs). */
const DOMAIN_WORD = /^[A-Za-z0-9._~/:-]{1,1024}$/;
const URL_WORD = /^[A-Za-z0-9._~/:,?&=-]{1,1024}$/;

function words(raw: string): string[] {
  return raw.trim().split(/\s+/).filter((w) => w !== '');
}

/** A pattern: a literal, or after `~` / `~*` a regular expression NGINX's PCRE must compile. */
function pattern(word: string, chars: RegExp, what: string): string {
  if (!chars.test(word)) throw new InvalidValue(`"${preview(word)}" is not ${what} (letters, digits and -._~/: only)`);
  const m = /^~(\*?)(.*)$/.exec(word);
  if (m) {
    // A regex of these characters has no quote, brace or backslash; only PCRE can refuse it.
    const re = m[2]!;
    if (re === '') throw new InvalidValue(`"${preview(word)}" is an empty regular expression`);
    pcreRegex({ caseless: m[1] === '*' })(re);
  }
  return word;
}

/** proxy_cookie_domain: `off`, or `domain replacement`. */
export const cookieDomainRewrite: Check<string> = (raw) => {
  const w = words(raw);
  if (w.length === 1 && w[0] === 'off') return 'off';
  if (w.length !== 2) throw new InvalidValue(`"${preview(raw)}" is not "off" or "domain replacement"`);
  return `${pattern(w[0]!, DOMAIN_WORD, 'a cookie domain')} ${pattern(w[1]!, DOMAIN_WORD, 'a cookie domain')}`;
};

/** proxy_cookie_path: `off`, or `path replacement`. */
export const cookiePathRewrite: Check<string> = (raw) => {
  const w = words(raw);
  if (w.length === 1 && w[0] === 'off') return 'off';
  if (w.length !== 2) throw new InvalidValue(`"${preview(raw)}" is not "off" or "path replacement"`);
  return `${pattern(w[0]!, URL_WORD, 'a cookie path')} ${replacement(w[1]!, 'a cookie path')}`;
};

function replacement(word: string, what: string): string {
  if (!URL_WORD.test(word) || word.startsWith('~')) throw new InvalidValue(`"${preview(word)}" is not ${what} (letters, digits and -._~/:,?&= only)`);
  return word;
}

/** proxy_redirect's first parameter: `off`, `default`, or the text (or `~regex`) to replace. */
export const redirectFrom: Check<string> = (raw) => {
  const w = words(raw);
  if (w.length !== 1) throw new InvalidValue(`"${preview(raw)}" must be one word: "off", "default" or the text to replace`);
  if (w[0] === 'off' || w[0] === 'default') return w[0];
  return pattern(w[0]!, URL_WORD, 'a redirect to replace');
};

/** proxy_redirect's second parameter: the replacement, or `off`. */
export const redirectTo: Check<string> = (raw) => {
  const w = words(raw);
  if (w.length !== 1) throw new InvalidValue(`"${preview(raw)}" must be one word: "off" or the replacement`);
  return w[0] === 'off' ? 'off' : replacement(w[0]!, 'a redirect replacement');
};

/** A size, or '' for NGINX's own default. */
export const optionalSize: Check<string> = (raw) => (raw.trim() === '' ? '' : size(raw));

const bytes = (v: string): bigint => sizeBytes(v, 'km') ?? 0n;

/**
 * proxy_busy_buffers_size as NGINX computes and checks it for a location whose proxy_buffers are
 * `number` × `bufferSize` (ingress-rx sizes both from proxy-buffer-size): '' is NGINX's own, twice
 * the buffer size; a value must lie between one buffer and all buffers but one.
 */
export function busyBuffersProblem(busy: string, bufferSize: string, number: number): string | null {
  if (busy === '') return null;
  const b = bytes(busy);
  const one = bytes(bufferSize);
  if (b < one) return `proxy-busy-buffers-size ${busy} is smaller than proxy-buffer-size ${bufferSize} (NGINX refuses it)`;
  if (b > BigInt(number - 1) * one) return `proxy-busy-buffers-size ${busy} is larger than all proxy buffers but one (${number - 1} × ${bufferSize}; NGINX refuses it)`;
  return null;
}

/** The busy buffers size a location runs with: the value, or NGINX's own (twice the buffer size). */
export function effectiveBusyBuffers(busy: string, bufferSize: string): string {
  return busy !== '' ? busy : `${bytes(bufferSize) * 2n}`;
}

/** proxy_max_temp_file_size: 0 (no temporary files) or at least one buffer, as NGINX checks. */
export function maxTempFileProblem(maxTemp: string, bufferSize: string): string | null {
  const m = bytes(maxTemp);
  if (m !== 0n && m < bytes(bufferSize)) return `proxy-max-temp-file-size ${maxTemp} is neither 0 nor at least proxy-buffer-size ${bufferSize} (NGINX refuses it)`;
  return null;
}
