// Snippet structure as NGINX will read it: a tokenizer that follows NGINX's configuration lexer
// (ngx_conf_read_token: words, quotes, backslash escapes, `${…}` variables, `#` comments) and the
// Lua module's for `*_by_lua_block` bodies (strings, long brackets, `--` comments), so a snippet
// is judged by the blocks NGINX sees, not by counting characters. A snippet must stay inside the
// block it is put in, end its last directive, and not use directives that reach outside the
// Ingress (new top-level blocks, other files, the node).

import { nginxUnescape } from './nginx-escape.js';
import { tenantRulesProblem } from './seclang.js';

/** Directives a snippet may not use, with why. */
const REFUSED: ReadonlyArray<[RegExp, string]> = [
  [/^(server|http|stream|events|mail|upstream|types)$/, 'opens a block that belongs outside an Ingress'],
  [/^include$/, 'reads another file'],
  // ingress-nginx's NGINX is built without them (its patch drop-alias-root): a snippet serving
  // files of the controller's filesystem there never ran.
  [/^(alias|root)$/, 'serves files from the controller\'s filesystem (ingress-nginx\'s NGINX has no alias or root directive)'],
  [/^load_module$/, 'loads an NGINX module'],
  [/^ssl_engine$/, 'loads an OpenSSL engine'],
  [/_by_lua(_block)?_file$|^lua_package_c?path$|_by_lua_file$/, 'loads Lua from a file'],
  [/^modsecurity_rules_file$/, 'reads another file'],
  [/^modsecurity_rules_remote$/, 'fetches rules over the network'],
];

export interface SnippetDirective {
  name: string;
  args: string[];
  /** 1-based line of the directive's name. */
  line: number;
}

export class SnippetProblem extends Error {
  constructor(readonly line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.name = 'SnippetProblem';
  }
}

const SPACE = new Set([' ', '\t', '\r', '\n']);

/** `[`, `=`*, `[` at `at`: the level of a Lua long bracket, or -1. */
function longBracket(text: string, at: number): number {
  if (text[at] !== '[') return -1;
  let i = at + 1;
  while (text[i] === '=') i++;
  return text[i] === '[' ? i - at - 1 : -1;
}

/**
 * The Lua module's reading of a `*_by_lua_block` body starting after its `{`: returns the index
 * just after the `}` that closes it.
 */
function skipLuaBlock(text: string, from: number, lineAt: (i: number) => number): number {
  let depth = 0;
  let i = from;
  const closeLong = (start: number, level: number): number => {
    const end = text.indexOf(`]${'='.repeat(level)}]`, start);
    if (end < 0) throw new SnippetProblem(lineAt(start), 'a Lua long string or comment is never closed');
    return end + level + 2;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === '-' && text[i + 1] === '-') {
      const level = longBracket(text, i + 2);
      if (level >= 0) { i = closeLong(i + level + 4, level); continue; }
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? text.length : nl + 1;
      continue;
    }
    if (c === '[') {
      const level = longBracket(text, i);
      if (level >= 0) { i = closeLong(i + level + 2, level); continue; }
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) {
        if (text[j] === '\n') throw new SnippetProblem(lineAt(j), 'a Lua string runs past the end of its line');
        j += text[j] === '\\' ? 2 : 1;
      }
      if (j >= text.length) throw new SnippetProblem(lineAt(i), 'a Lua string is never closed');
      i = j + 1;
      continue;
    }
    if (c === '{') depth++;
    else if (c === '}') {
      if (depth === 0) return i + 1;
      depth--;
    }
    i++;
  }
  throw new SnippetProblem(lineAt(from), 'a Lua block is never closed');
}

/**
 * The directives of a snippet, in order, as NGINX reads them; throws a SnippetProblem when the
 * snippet would leave its block, ends inside a directive, or would not parse.
 */
export function readSnippet(text: string): SnippetDirective[] {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const lineAt = (pos: number): number => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= pos) lo = mid; else hi = mid - 1;
    }
    return lo + 1;
  };
  const out: SnippetDirective[] = [];
  let args: string[] = [];
  let argsLine = 1;
  let depth = 0;
  const finish = (at: number, block: boolean): void => {
    if (args.length === 0) throw new SnippetProblem(lineAt(at), `unexpected "${block ? '{' : ';'}"`);
    out.push({ name: args[0]!, args: args.slice(1), line: argsLine });
    args = [];
  };

  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (SPACE.has(c)) { i++; continue; }
    if (c === '#') {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
      continue;
    }
    if (c === ';' || c === '{') {
      finish(i, c === '{');
      i++;
      if (c === '{') {
        const last = out[out.length - 1]!;
        if (last.name.endsWith('_by_lua_block')) i = skipLuaBlock(text, i, lineAt);
        else depth++;
      }
      continue;
    }
    if (c === '}') {
      if (args.length > 0) throw new SnippetProblem(lineAt(i), 'unexpected "}" inside a directive');
      if (depth === 0) throw new SnippetProblem(lineAt(i), 'closes a block it did not open');
      depth--;
      i++;
      continue;
    }
    if (args.length === 0) argsLine = lineAt(i);
    const start = i;
    if (c === '"' || c === "'") {
      // A quoted word: backslash escapes the next character; whitespace, `;`, `{` or `)` must follow.
      let j = i + 1;
      while (j < n && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      if (j >= n) throw new SnippetProblem(lineAt(i), 'a quoted string is never closed');
      args.push(nginxUnescape(text.slice(i + 1, j)));
      i = j + 1;
      if (i < n && !SPACE.has(text[i]!) && text[i] !== ';' && text[i] !== '{' && text[i] !== ')') {
        throw new SnippetProblem(lineAt(i), `unexpected "${text[i]}" after a quoted string`);
      }
      continue;
    }
    // A word: ends at whitespace, `;` or `{` (not at `}`, and not at the `{` of `${`);
    // a backslash escapes the next character.
    let variable = false;
    let j = i;
    for (; j < n; j++) {
      const d = text[j]!;
      if (d === '{' && variable) { variable = false; continue; }
      variable = false;
      if (d === '\\') { j++; continue; }
      if (d === '$') { variable = true; continue; }
      if (SPACE.has(d) || d === ';' || d === '{') break;
    }
    args.push(nginxUnescape(text.slice(start, Math.min(j, n))));
    i = j;
  }
  if (args.length > 0) throw new SnippetProblem(lineAt(n), `the last directive "${args[0]}" is not ended with ";"`);
  if (depth > 0) throw new SnippetProblem(lineAt(n), 'leaves a block open');
  return out;
}

/** The directives of a snippet, or the problem NGINX would find in its structure. */
function directivesOf(text: string): SnippetDirective[] | string {
  try {
    return readSnippet(text);
  } catch (err) {
    if (err instanceof SnippetProblem) return err.message;
    throw err;
  }
}

const HTTP_ONLY_BLOCKS = ['location', 'if', 'http', 'events', 'mail', 'stream', 'limit_except', 'types'];

/** Directives whose first argument is the peer NGINX connects to (an address, a URL, an upstream name). */
const PEER_DIRECTIVES = new Set(['proxy_pass', 'grpc_pass', 'fastcgi_pass', 'uwsgi_pass', 'scgi_pass', 'memcached_pass']);
const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443', grpc: '80', grpcs: '443', uwsgi: '80', suwsgi: '443' };

/**
 * The host and port a peer directive (or an upstream's `server`) names, or null when it names
 * none NGINX dials as written (a variable, an upstream name without a port is looked up as one).
 */
export function snippetPeer(d: SnippetDirective): { host: string; port: string } | null {
  const peer = PEER_DIRECTIVES.has(d.name) || (d.name === 'server' && d.args.length > 0) ? d.args[0] : undefined;
  if (peer === undefined || peer.includes('$')) return null;
  const scheme = /^([a-z]+):\/\//i.exec(peer);
  const rest = scheme ? peer.slice(scheme[0].length) : peer;
  const authority = rest.split('/')[0]!;
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(authority);
  if (!m || m[1] === '') return null;
  const port = m[2] ?? (scheme ? DEFAULT_PORTS[scheme[1]!.toLowerCase()] : undefined);
  return port === undefined ? null : { host: m[1]!, port };
}

/** Judges a peer a snippet connects to: why it may not, or null. */
export type PeerCheck = (host: string, port: string) => string | null;

/**
 * Why a tenant's snippet may not be used, or null; the reason names the line. `blocks`: block
 * directives the snippet's context takes (`server` and `upstream` in a stream-snippet). `peer`:
 * the upstream address policy, applied to the peers the snippet names as written.
 */
export function snippetProblem(text: string, opts: { blocks?: readonly string[]; peer?: PeerCheck } = {}): string | null {
  const directives = directivesOf(text);
  if (typeof directives === 'string') return directives;
  for (const d of directives) {
    // A stream-snippet: blocks of the http context would make NGINX refuse the whole configuration.
    if (opts.blocks && HTTP_ONLY_BLOCKS.includes(d.name)) return `line ${d.line}: "${d.name}" is not allowed in the stream context`;
    const peer = opts.peer ? snippetPeer(d) : null;
    const refused = peer ? opts.peer!(peer.host, peer.port) : null;
    if (refused) return `line ${d.line}: "${d.name}" connects to ${peer!.host.slice(0, 80)}:${peer!.port}: ${refused}`;
    if (opts.blocks?.includes(d.name)) continue;
    for (const [re, why] of REFUSED) {
      if (re.test(d.name)) return `line ${d.line}: "${d.name.slice(0, 60)}" ${why}`;
    }
    if (d.name === 'modsecurity_rules') {
      // The same rules a modsecurity-snippet annotation may hold, read by the same rules.
      for (const a of d.args) {
        const problem = tenantRulesProblem(a);
        if (problem) return `line ${d.line}: modsecurity_rules: ${problem}`;
      }
    }
    if (d.args.some((a) => /^unix:/i.test(a.trim()) || /:\/\/unix:/i.test(a))) {
      return `line ${d.line}: "${d.name.slice(0, 60)}" names a unix socket`;
    }
  }
  return null;
}

/** Where the operator's snippets go: the main context, http, every server, every location, stream. */
export type SnippetContext = 'main' | 'http' | 'server' | 'location' | 'stream';

/** Blocks ingress-rx writes itself, or that NGINX does not take, in each context. */
const MISPLACED: Readonly<Record<SnippetContext, readonly string[]>> = {
  main: ['http', 'events', 'stream', 'server', 'location', 'upstream'],
  http: ['http', 'events', 'stream', 'mail'],
  server: ['http', 'events', 'stream', 'mail', 'server', 'upstream'],
  location: ['http', 'events', 'stream', 'mail', 'server', 'upstream'],
  stream: ['http', 'events', 'stream', 'mail', 'location'],
};

/**
 * Why the operator's snippet (a ConfigMap key) may not be used, or null. The operator may use any
 * directive (include, load_module, Lua files); the snippet must still stay inside its block, and
 * may not open a block its context cannot hold (NGINX would refuse the whole configuration).
 */
export function operatorSnippetProblem(text: string, context: SnippetContext): string | null {
  const directives = directivesOf(text);
  if (typeof directives === 'string') return directives;
  const misplaced = MISPLACED[context];
  for (const d of directives) {
    if (misplaced.includes(d.name)) return `line ${d.line}: "${d.name}" cannot be opened in the ${context} context here`;
  }
  return null;
}
