// NGINX's own escapes inside a configuration word or quoted string, as ngx_conf_read_token
// stores the value.

/** A word's value as NGINX stores it: `\"`, `\'`, `\\` unescaped, `\t`, `\r`, `\n` made characters. */
export function nginxUnescape(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\' && i + 1 < raw.length) {
      const n = raw[i + 1]!;
      if (n === '"' || n === "'" || n === '\\') { out += n; i++; continue; }
      if (n === 't') { out += '\t'; i++; continue; }
      if (n === 'r') { out += '\r'; i++; continue; }
      if (n === 'n') { out += '\n'; i++; continue; }
    }
    out += c;
  }
  return out;
}
