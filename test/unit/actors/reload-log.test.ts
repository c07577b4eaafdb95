// Reading NGINX's verdict on a SIGHUP from the master's reload log: the lines as NGINX 1.22
// writes them for a refused and a taken configuration, with other processes' lines and earlier
// signals mixed in, and the log file read from an offset (a half-written line waits).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openReloadLog, parseReloadLog, reloadVerdict } from '../../../src/actors/reload-log.js';

const at = (level: string, pid: number, message: string) => `2026/11/25 02:59:09 [${level}] ${pid}#${pid}: ${message}`;

const refused = [
  at('notice', 7, 'signal 1 (SIGHUP) received from 3, reconfiguring'),
  at('notice', 7, 'reconfiguring'),
  at('emerg', 7, 'unknown directive "bogus" in /p/nginx.conf:10'),
  at('notice', 7, 'signal 29 (SIGIO) received from 3'),
].join('\n');

test('a refused configuration: NGINX\'s errors in nginx -t\'s form, settled by the signal it logs after', () => {
  assert.equal(reloadVerdict(parseReloadLog(refused), 7), {
    reconfiguring: true, settled: true, errors: ['nginx: [emerg] unknown directive "bogus" in /p/nginx.conf:10'],
  });
});

test('before the master logs a signal again, the attempt is not over (it may still be parsing or binding)', () => {
  const lines = parseReloadLog(refused).slice(0, 3);
  assert.equal(reloadVerdict(lines, 7), { reconfiguring: true, settled: false, errors: ['nginx: [emerg] unknown directive "bogus" in /p/nginx.conf:10'] });
  assert.equal(reloadVerdict(lines.slice(0, 1), 7), { reconfiguring: false, settled: false, errors: [] });
});

test('only the master counts, and only after "reconfiguring": signals handled before it, workers\' errors and later lines are not the verdict', () => {
  const text = [
    at('notice', 7, 'signal 10 (SIGUSR1) received from 3, reopening logs'),
    at('crit', 8, 'a worker error'),
    at('notice', 7, 'reconfiguring'),
    at('alert', 9, 'another process'),
    at('notice', 7, 'using the "epoll" event method'),
    at('notice', 7, 'start worker processes'),
    at('notice', 7, 'start worker process 11'),
    at('notice', 7, 'signal 29 (SIGIO) received from 3'),
    at('alert', 7, 'after the verdict'),
  ].join('\n');
  assert.equal(reloadVerdict(parseReloadLog(text), 7), { reconfiguring: true, settled: true, errors: [] });
  assert.equal(reloadVerdict(parseReloadLog(text), 8), { reconfiguring: false, settled: false, errors: [] }, 'another master pid');
});

test('alert and crit lines are errors too (a failed mmap or bind); warnings are not', () => {
  const text = [at('notice', 7, 'reconfiguring'), at('warn', 7, 'could not build optimal server_names_hash'),
    at('emerg', 7, 'bind() to 127.0.0.1:80 failed (98: Address already in use)'), at('emerg', 7, 'still could not bind()'),
    at('alert', 7, 'mmap(MAP_ANON|MAP_SHARED, 1048576) failed (12: Cannot allocate memory)'), at('notice', 7, 'signal 17 (SIGCHLD) received from 9')].join('\n');
  assert.equal(reloadVerdict(parseReloadLog(text), 7).errors, [
    'nginx: [emerg] bind() to 127.0.0.1:80 failed (98: Address already in use)', 'nginx: [emerg] still could not bind()',
    'nginx: [alert] mmap(MAP_ANON|MAP_SHARED, 1048576) failed (12: Cannot allocate memory)',
  ]);
});

test('the log file: lines since the mark; a line not yet ended waits; a missing file is no lines; a large file is emptied at the mark', () => {
  const dir = mkdtempSync(join(tmpdir(), 'irx-reload-log-'));
  try {
    const path = join(dir, 'reload.log');
    const log = openReloadLog(path);
    assert.is(log.mark(), 0, 'no file yet');
    assert.equal(log.since(0), []);
    writeFileSync(path, `${at('notice', 7, 'old line')}\n`);
    const offset = log.mark();
    assert.is(offset, statSync(path).size);
    appendFileSync(path, `${at('notice', 7, 'reconfiguring')}\n${at('emerg', 7, 'half')}`);
    assert.equal(log.since(offset).map((l) => l.message), ['reconfiguring']);
    appendFileSync(path, ' written\n');
    assert.equal(log.since(offset).map((l) => l.message), ['reconfiguring', 'half written']);
    writeFileSync(path, 'x'.repeat((1 << 20) + 1));
    assert.is(log.mark(), 0);
    assert.is(statSync(path).size, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
