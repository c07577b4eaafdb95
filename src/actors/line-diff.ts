// A small unified line diff for the debug log: common head and tail are trimmed, the changed
// middle is shown as one hunk. Linear time, so it stays cheap on a 10k-server nginx.conf.
export function lineDiff(before: string, after: string, name = 'nginx.conf', context = 3): string {
  if (before === after) return '';
  const a = before.split('\n');
  const b = after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const from = Math.max(0, head - context);
  const aEnd = a.length - tail;
  const bEnd = b.length - tail;
  const aTo = Math.min(a.length, aEnd + context);
  const bTo = Math.min(b.length, bEnd + context);
  const out = [`--- ${name}`, `+++ ${name}`, `@@ -${from + 1},${aTo - from} +${from + 1},${bTo - from} @@`];
  for (let i = from; i < head; i++) out.push(` ${a[i]}`);
  for (let i = head; i < aEnd; i++) out.push(`-${a[i]}`);
  for (let i = head; i < bEnd; i++) out.push(`+${b[i]}`);
  for (let i = bEnd; i < bTo; i++) out.push(` ${b[i]}`);
  return out.join('\n');
}
