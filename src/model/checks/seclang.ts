// ModSecurity rules (SecLang) as NGINX and libmodsecurity read a modsecurity-snippet. The text is
// printed inside `modsecurity_rules '…'` (as ingress-nginx prints it), so NGINX first unescapes it
// (\' \" \\ \t \r \n); libmodsecurity then parses what NGINX hands over. A tenant's snippet is read
// as a strict subset of SecLang whose every directive acts only on the requests of the tenant's
// own location: what reads or writes files on the node, fetches URLs, runs scripts, or changes what
// every Ingress shares (persistent collections, engine-wide settings) is refused, naming the line.
// Ambiguous text (where two readings of SecLang could disagree) is refused too.
import { nginxUnescape } from './nginx-escape.js';

/** The longest parameter NGINX's configuration reader takes (NGX_CONF_BUFFER, less the quotes and some margin). */
export const MAX_RULES_CHUNK = 4000;

export class RulesProblem extends Error {
  constructor(readonly line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.name = 'RulesProblem';
  }
}

// ---- NGINX's single-quoted string

/**
 * The text NGINX hands to ModSecurity for `raw` written between single quotes (as an
 * ingress-nginx user writes a modsecurity-snippet: `\'` for a quote); throws when `raw` would end
 * the quoted string early, escape its closing quote, or holds control characters other than tab
 * and newline.
 */
export function unquoteNginx(raw: string): string {
  let line = 1;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\n') line++;
    else if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(c)) {
      throw new RulesProblem(line, `control character \\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
    } else if (c === '\\') {
      if (i + 1 >= raw.length) throw new RulesProblem(line, 'ends with a backslash, which would escape the closing quote of modsecurity_rules');
      if (raw[i + 1] === '\n') line++;
      i++;
    } else if (c === "'") {
      throw new RulesProblem(line, "an unescaped ' would end modsecurity_rules' quoted string: write \\' (as for ingress-nginx)");
    }
  }
  return nginxUnescape(raw);
}

/** `text` written so that NGINX's single-quoted string gives it back unchanged. */
export function quoteForNginx(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

// ---- SecLang tokens

interface Arg {
  /** The argument's text: a quoted one without its quotes, continuations kept as written. */
  text: string;
  quoted: boolean;
  line: number;
}

/** One directive: its name and arguments, and where it lies in the text. */
export interface RulesDirective {
  name: string;
  args: Arg[];
  line: number;
  start: number;
  end: number;
}

/**
 * The directives of SecLang text: one per line, a backslash at the very end of a line continuing
 * it; `#` starts a comment line. Arguments are words or double-quoted strings (a quote inside
 * escaped with a backslash; a string stays on its line except for continuations).
 */
export function readRules(text: string): RulesDirective[] {
  const out: RulesDirective[] = [];
  // A line continuation as libmodsecurity skips it: spaces, a backslash, a newline, spaces.
  const CONTINUATION = /[ \t]*\\\n[ \t]*/y;
  let line = 1;
  let i = 0;
  const n = text.length;
  let current: RulesDirective | null = null;
  const finish = (at: number): void => {
    if (current) {
      current.end = at;
      out.push(current);
      current = null;
    }
  };
  while (i < n) {
    const c = text[i]!;
    if (c === ' ' || c === '\t') { i++; continue; }
    if (c === '\r') throw new RulesProblem(line, 'carriage return (lines must end with a newline alone)');
    if (c === '\n') { finish(i); line++; i++; continue; }
    if (c === '\\') {
      if (text[i + 1] !== '\n') throw new RulesProblem(line, 'a backslash outside a quoted string must end its line (a line continuation)');
      line++;
      i += 2;
      continue;
    }
    if (c === '#' && current === null) {
      const nl = text.indexOf('\n', i);
      const end = nl < 0 ? n : nl;
      // libmodsecurity carries some comments over a continuation: keep comments on one line.
      if (/\\[ \t]*$/.test(text.slice(i, end))) throw new RulesProblem(line, 'a comment ends with a backslash');
      i = end;
      continue;
    }
    const startLine = line;
    let arg: Arg;
    if (c === '"') {
      let j = i + 1;
      let value = '';
      for (;;) {
        if (j >= n) throw new RulesProblem(startLine, 'a quoted string is never closed');
        const d = text[j]!;
        if (d === '"') break;
        if (d === '\n') throw new RulesProblem(line, 'a quoted string runs past the end of its line (continue it with a backslash)');
        if (d === '\\' || d === ' ' || d === '\t') {
          // A continuation (it may start with spaces before its backslash).
          CONTINUATION.lastIndex = j;
          const cont = CONTINUATION.exec(text);
          if (cont) { value += '\\\n'; line++; j += cont[0].length; continue; }
        }
        if (d === '\\') {
          if (j + 1 >= n) throw new RulesProblem(line, 'a quoted string is never closed');
          if (text[j + 1] === '\n') throw new RulesProblem(line, 'a quoted string runs past the end of its line');
          value += d + text[j + 1]!;
          j += 2;
          continue;
        }
        value += d;
        j++;
      }
      arg = { text: value, quoted: true, line: startLine };
      i = j + 1;
      if (i < n && !/[ \t\n\\]/.test(text[i]!)) throw new RulesProblem(line, `unexpected "${text[i]}" after a quoted string`);
    } else {
      let j = i;
      while (j < n && !/[ \t\n]/.test(text[j]!) && !(text[j] === '\\' && text[j + 1] === '\n')) j++;
      const word = text.slice(i, j);
      if (/["']/.test(word)) throw new RulesProblem(line, `a quote inside the word ${JSON.stringify(word.slice(0, 40))} (quote whole arguments with ")`);
      arg = { text: word, quoted: false, line: startLine };
      i = j;
    }
    if (current === null) {
      if (arg.quoted) throw new RulesProblem(startLine, 'a directive must start with its name, not a quoted string');
      current = { name: arg.text, args: [], line: startLine, start: i - arg.text.length, end: n };
    } else {
      current.args.push(arg);
    }
  }
  finish(n);
  return out;
}

// ---- the subset a tenant may use

const ON_OFF = ['on', 'off'];
const NUMBER = /^\d{1,10}$/;

type ArgsCheck = (args: readonly Arg[]) => string | null;

const one = (check: (a: Arg) => string | null): ArgsCheck => (args) => (args.length !== 1 ? `takes one argument (${args.length} given)` : check(args[0]!));
const choice = (values: readonly string[]): ArgsCheck => one((a) => (values.includes(a.text.toLowerCase()) ? null : `takes ${values.join(', ')}`));
const number: ArgsCheck = one((a) => (NUMBER.test(a.text) ? null : 'takes a number'));
const oneLine = (a: Arg): string | null => (a.text.includes('\n') ? 'must stay on one line' : a.text.length > 1024 ? 'is longer than 1024 characters' : null);

/** Why each refused directive is refused (lower-case names); anything not in ALLOWED is refused too. */
const REFUSED_DIRECTIVES: Readonly<Record<string, string>> = {
  include: 'reads files on the node',
  secremoterules: 'fetches rules over the network',
  secremoterulesfailaction: 'belongs to SecRemoteRules, which is refused',
  secrulescript: 'runs a Lua script on the node',
  secdebuglog: 'writes a file on the node',
  secauditlogstoragedir: 'writes files on the node',
  secauditlog2: 'writes a file on the node',
  sectmpdir: 'writes files on the node',
  secdatadir: 'writes files on the node',
  secuploaddir: 'writes files on the node',
  secuploadkeepfiles: 'keeps files on the node',
  secgeolookupdb: 'reads a file on the node',
  secunicodemapfile: 'reads a file on the node',
  secxmlexternalentity: 'lets request bodies make ModSecurity read files and URLs',
  sechttpblkey: 'makes DNS lookups to a blocklist service',
};

const ALLOWED: Readonly<Record<string, ArgsCheck>> = {
  secruleengine: choice(['on', 'off', 'detectiononly']),
  secrequestbodyaccess: choice(ON_OFF),
  secresponsebodyaccess: choice(ON_OFF),
  secrequestbodylimit: number,
  secrequestbodynofileslimit: number,
  secrequestbodyinmemorylimit: number,
  secresponsebodylimit: number,
  secrequestbodyjsondepthlimit: number,
  secargumentslimit: number,
  secrequestbodylimitaction: choice(['reject', 'processpartial']),
  secresponsebodylimitaction: choice(['reject', 'processpartial']),
  secresponsebodymimetype: (args) => (args.length === 0 ? 'takes MIME types' : args.every((a) => /^[A-Za-z0-9.+*/-]{1,128}$/.test(a.text)) ? null : 'takes MIME types'),
  secresponsebodymimetypesclear: (args) => (args.length === 0 ? null : 'takes no argument'),
  secauditengine: choice(['on', 'off', 'relevantonly']),
  secauditlogparts: one((a) => (/^[A-KZ]{1,12}$/.test(a.text) ? null : 'takes audit log parts (letters A-K and Z)')),
  secauditlogrelevantstatus: one(oneLine),
  secauditlogformat: choice(['json', 'native']),
  secauditlogtype: choice(['serial']),
  secauditlog: one((a) => (['/dev/stdout', '/dev/stderr'].includes(a.text) ? null : 'may only name /dev/stdout or /dev/stderr (any other path writes a file on the node)')),
  secargumentseparator: one((a) => (/^[&;]$/.test(a.text) ? null : 'takes & or ;')),
  seccookieformat: choice(['0', '1']),
  secmarker: one((a) => (/^[A-Za-z0-9_.:-]{1,128}$/.test(a.text) ? null : 'takes a marker name')),
  secrule: (args) => {
    if (args.length < 2 || args.length > 3) return 'takes variables, an operator and actions';
    return variablesProblem(args[0]!) ?? operatorProblem(args[1]!) ?? (args[2] ? actionsProblem(args[2]) : null);
  },
  secaction: one((a) => actionsProblem(a)),
  secdefaultaction: one((a) => actionsProblem(a)),
  secruleremovebyid: (args) => (args.length > 0 && args.every((a) => /^\d{1,10}(-\d{1,10})?$/.test(a.text)) ? null : 'takes rule ids and ranges'),
  secruleremovebytag: one(oneLine),
  secruleremovebymsg: one(oneLine),
  secruleupdatetargetbyid: (args) => (args.length === 2 && /^\d{1,10}(-\d{1,10})?$/.test(args[0]!.text) ? variablesProblem(args[1]!) : 'takes a rule id and variables'),
  secruleupdatetargetbytag: (args) => (args.length === 2 ? oneLine(args[0]!) ?? variablesProblem(args[1]!) : 'takes a tag and variables'),
  secruleupdatetargetbymsg: (args) => (args.length === 2 ? oneLine(args[0]!) ?? variablesProblem(args[1]!) : 'takes a message and variables'),
  secruleupdateactionbyid: (args) => (args.length === 2 && /^\d{1,10}(:\d{1,4})?$/.test(args[0]!.text) ? actionsProblem(args[1]!) : 'takes a rule id and actions'),
};

/** Directives that set what the whole engine shares (not in ALLOWED, refused with this reason). */
const ENGINE_WIDE = 'sets what every Ingress shares (a setting of the whole ModSecurity engine)';

const SELECTOR = String.raw`(?::(?:/(?:[^/\\\n]|\\.)*/|[^|\s"'/][^|\s"']*))?`;
const VARIABLES = new RegExp(String.raw`^[!&]?[A-Za-z_][A-Za-z0-9_]*${SELECTOR}(?:\|[!&]?[A-Za-z_][A-Za-z0-9_]*${SELECTOR})*$`);

function variablesProblem(a: Arg): string | null {
  return VARIABLES.test(a.text) ? null : `${JSON.stringify(a.text.slice(0, 60))} is not a list of variables`;
}

/** Operators that read files, run programs or reach the network, with why. */
const REFUSED_OPERATORS: Readonly<Record<string, string>> = {
  inspectfile: 'runs a program on the node',
  fuzzyhash: 'reads a file on the node',
  pmfromfile: 'reads a file on the node or fetches a URL',
  pmf: 'reads a file on the node or fetches a URL',
  ipmatchfromfile: 'reads a file on the node or fetches a URL',
  ipmatchf: 'reads a file on the node or fetches a URL',
  validatedtd: 'reads a file on the node',
  validateschema: 'reads a file on the node',
  rbl: 'makes DNS lookups',
  gsblookup: 'reaches the network',
};

const OPERATORS = new Set([
  'rx', 'rxglobal', 'pm', 'streq', 'strmatch', 'contains', 'containsword', 'beginswith', 'endswith', 'within',
  'eq', 'ge', 'gt', 'le', 'lt', 'ipmatch', 'detectsqli', 'detectxss', 'validatebyterange', 'validateurlencoding',
  'validateutf8encoding', 'verifycc', 'verifycpf', 'verifyssn', 'verifysvnr', 'unconditionalmatch', 'nomatch', 'geolookup',
]);

function operatorProblem(a: Arg): string | null {
  if (a.text.includes('\n')) return 'the operator must stay on one line';
  const m = /^!?@([A-Za-z0-9]+)(?:[ \t]|$)/.exec(a.text);
  // Without `@` the operator is a regular expression (@rx).
  if (!m) return a.text.startsWith('@') || a.text.startsWith('!@') ? `${JSON.stringify(a.text.slice(0, 40))} is not an operator` : null;
  const name = m[1]!.toLowerCase();
  const refused = REFUSED_OPERATORS[name];
  if (refused) return `operator @${m[1]} ${refused}`;
  return OPERATORS.has(name) ? null : `operator @${m[1]} is not allowed`;
}

/** Actions, with why the refused ones are refused. */
const REFUSED_ACTIONS: Readonly<Record<string, string>> = {
  exec: 'runs a script on the node',
  initcol: 'opens a persistent collection, which every Ingress shares',
  setsid: 'opens the session collection, which every Ingress shares',
  setuid: 'opens the user collection, which every Ingress shares',
  setrsc: 'opens the resource collection, which every Ingress shares',
  setenv: "sets the NGINX worker's environment, which every Ingress shares",
  pause: 'stalls the NGINX worker, which serves every Ingress',
  proxy: 'is not supported by ModSecurity 3',
  append: 'is not supported by ModSecurity 3',
  prepend: 'is not supported by ModSecurity 3',
};

const ACTIONS = new Set([
  'accuracy', 'allow', 'auditlog', 'block', 'capture', 'chain', 'ctl', 'deny', 'drop', 'id', 'log', 'logdata', 'maturity',
  'msg', 'multimatch', 'noauditlog', 'nolog', 'pass', 'phase', 'redirect', 'rev', 'sanitisearg', 'sanitisematched',
  'sanitisematchedbytes', 'sanitiserequestheader', 'sanitiseresponseheader', 'severity', 'setvar', 'expirevar',
  'deprecatevar', 'skip', 'skipafter', 'status', 't', 'tag', 'ver', 'xmlns',
]);

/** ctl: targets that change only the transaction at hand. */
const CTL = new Set([
  'ruleengine', 'requestbodyaccess', 'requestbodyprocessor', 'ruleremovebyid', 'ruleremovebytag', 'ruleremovetargetbyid',
  'ruleremovetargetbytag', 'auditengine', 'auditlogparts', 'forcerequestbodyvariable',
]);

export interface Action {
  name: string;
  value: string | null;
}

/**
 * The actions of a quoted action list: `name` or `name:value`, separated by commas; a value in
 * single quotes may hold commas (a quote inside escaped with a backslash), an unquoted one ends at
 * the next unescaped comma. Continuations may stand between actions or inside a quoted value.
 */
export function readActions(text: string): Action[] {
  const out: Action[] = [];
  let i = 0;
  const n = text.length;
  const skipSpace = (): void => {
    for (;;) {
      const cont = /^[ \t]*\\\n[ \t]*/.exec(text.slice(i));
      if (cont) { i += cont[0].length; continue; }
      if (text[i] === ' ' || text[i] === '\t') { i++; continue; }
      return;
    }
  };
  // A macro, %{…}: libmodsecurity reads it to its `}` whatever it holds, so it must hold no
  // character that ends a value here.
  const macro = (at: number): string => {
    const end = text.indexOf('}', at);
    const body = end < 0 ? text.slice(at) : text.slice(at, end + 1);
    if (end < 0 || /['",\n\\]/.test(body)) throw new Error(`a macro ${JSON.stringify(body.slice(0, 30))} holds a quote, comma, backslash or newline, or is never closed`);
    return body;
  };
  for (;;) {
    skipSpace();
    if (i >= n) {
      if (out.length > 0) throw new Error('an action list ends with a comma');
      return out;
    }
    const name = /^[A-Za-z0-9]+/.exec(text.slice(i))?.[0];
    if (!name) throw new Error(`${JSON.stringify(text.slice(i, i + 20))} does not start an action`);
    i += name.length;
    let value: string | null = null;
    if (text[i] === ':') {
      i++;
      if (text[i] === "'") {
        let j = i + 1;
        let v = '';
        for (;;) {
          if (j >= n) throw new Error(`the quoted value of ${name} is never closed`);
          const d = text[j]!;
          if (d === "'") break;
          if (d === '%' && text[j + 1] === '{') { const m = macro(j); v += m; j += m.length; continue; }
          if (d === '\\' && j + 1 < n) { v += d + text[j + 1]!; j += 2; continue; }
          v += d;
          j++;
        }
        value = v;
        i = j + 1;
      } else {
        let j = i;
        let v = '';
        while (j < n && text[j] !== ',') {
          const d = text[j]!;
          if (d === '%' && text[j + 1] === '{') { const m = macro(j); v += m; j += m.length; continue; }
          if (d === "'") throw new Error(`a quote inside the unquoted value of ${name}`);
          if (d === '\\') {
            if (text[j + 1] === '\n' || /^\\[ \t]+\n/.test(text.slice(j))) throw new Error(`a line continuation inside the value of ${name} (continue after a comma)`);
            v += d + (text[j + 1] ?? '');
            j += 2;
            continue;
          }
          if (/^[ \t]*\\\n/.test(text.slice(j))) throw new Error(`a line continuation inside the value of ${name} (continue after a comma)`);
          v += d;
          j++;
        }
        value = v.replace(/[ \t]+$/, '');
        i = j;
      }
    }
    out.push({ name, value });
    skipSpace();
    if (i >= n) return out;
    if (text[i] !== ',') throw new Error(`unexpected "${text[i]}" after the action ${name}`);
    i++;
  }
}

/** The collection a setvar/expirevar/deprecatevar value names (`tx` in `!tx.score=+5`). */
function collectionOf(value: string): string {
  return value.replace(/^[ \t]*!?/, '').split('.')[0]!.toLowerCase();
}

function actionsProblem(a: Arg): string | null {
  if (!a.quoted) return 'actions must be written in double quotes';
  let actions: Action[];
  try {
    actions = readActions(a.text);
  } catch (err) {
    return (err as Error).message;
  }
  for (const { name, value } of actions) {
    const lower = name.toLowerCase();
    const refused = REFUSED_ACTIONS[lower];
    if (refused) return `action ${name} ${refused}`;
    if (!ACTIONS.has(lower)) return `action ${name} is not allowed`;
    if ((lower === 'setvar' || lower === 'expirevar' || lower === 'deprecatevar') && collectionOf(value ?? '') !== 'tx') {
      return `${name} may only change the transaction's TX collection (the others are shared by every Ingress)`;
    }
    if (lower === 'ctl') {
      const target = /^([A-Za-z]+)=/.exec(value ?? '')?.[1]?.toLowerCase();
      if (!target || !CTL.has(target)) return `ctl:${(value ?? '').slice(0, 40)} is not allowed`;
    }
  }
  return null;
}

/** Why a tenant's ModSecurity rules (as ModSecurity reads them) may not be used, or null. */
export function tenantRulesProblem(text: string): string | null {
  let directives: RulesDirective[];
  try {
    directives = readRules(text);
  } catch (err) {
    if (err instanceof RulesProblem) return err.message;
    throw err;
  }
  for (const d of directives) {
    const lower = d.name.toLowerCase();
    const refused = REFUSED_DIRECTIVES[lower];
    if (refused) return `line ${d.line}: ${d.name} ${refused}`;
    const check = ALLOWED[lower];
    if (!check) return `line ${d.line}: ${d.name.slice(0, 60)} ${/^sec[a-z]+$/i.test(d.name) ? ENGINE_WIDE : 'is not a ModSecurity directive a tenant may use'}`;
    const problem = check(d.args);
    if (problem) return `line ${d.line}: ${d.name} ${problem}`;
  }
  return null;
}

// ---- splitting into NGINX parameters

/**
 * Rules split into pieces NGINX can take as one parameter each (quoted for NGINX, at most
 * MAX_RULES_CHUNK bytes), cut only between directives and never inside a chain of rules
 * (ModSecurity parses each `modsecurity_rules` on its own). Throws a RulesProblem when one
 * directive alone is too long.
 */
export function rulesChunks(text: string): string[] {
  let directives: RulesDirective[];
  try {
    directives = readRules(text);
  } catch {
    // Rules this reader cannot split (an operator's own configuration may use SecLang it does
    // not know): one piece, which must then fit.
    if (quoteForNginx(text).length > MAX_RULES_CHUNK) throw new RulesProblem(1, `is ${quoteForNginx(text).length} bytes long and cannot be split (at most ${MAX_RULES_CHUNK} in one piece)`);
    return text.trim() === '' ? [] : [text];
  }
  // Units: a directive and the rules chained to it.
  const units: Array<{ text: string; line: number }> = [];
  let chained = false;
  for (const d of directives) {
    const piece = text.slice(d.start, d.end);
    if (chained) units[units.length - 1]!.text += `\n${piece}`;
    else units.push({ text: piece, line: d.line });
    const actions = d.args[d.name.toLowerCase() === 'secrule' ? 2 : 0];
    chained = /^sec(rule|action)$/i.test(d.name) && actions !== undefined && /(^|[,\s])chain\s*(,|$)/i.test(actions.text);
  }
  const chunks: string[] = [];
  let current = '';
  for (const u of units) {
    if (quoteForNginx(u.text).length > MAX_RULES_CHUNK) throw new RulesProblem(u.line, `a directive of ${quoteForNginx(u.text).length} bytes is longer than NGINX takes in one parameter (${MAX_RULES_CHUNK})`);
    const joined = current === '' ? u.text : `${current}\n${u.text}`;
    if (quoteForNginx(joined).length > MAX_RULES_CHUNK) {
      chunks.push(current);
      current = u.text;
    } else {
      current = joined;
    }
  }
  if (current !== '') chunks.push(current);
  return chunks;
}
