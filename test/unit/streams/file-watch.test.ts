// The template and GeoIP watchers: a content change is a task; a touch is not; an editor that
// replaces the file by renaming over it is still seen, and later edits too.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, renameSync, rmSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { VirtualTimeScheduler } from 'rxjs';
import { geoipWatcher, templateWatcher } from '../../../src/streams/file-watch.js';
import type { Task } from '../../../src/store/events.js';
import { waitFor } from '../../support/wait.js';

function harness() {
  const dir = mkdtempSync(join(tmpdir(), 'ingress-rx-watch-'));
  const tasks: Task[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => { lines.push(JSON.parse(s)); } });
  const unchanged = () => lines.filter((l) => /content unchanged/.test(String(l.msg))).length;
  /** Runs `act` and waits until the watcher has looked and found nothing new. */
  const expectNothing = async (act: () => void) => {
    const seen = unchanged();
    const count = tasks.length;
    act();
    await waitFor(() => unchanged() > seen, { what: 'watcher to look' });
    assert.is(tasks.length, count, 'no task');
  };
  const expectTasks = async (n: number, act: () => void) => {
    const count = tasks.length;
    act();
    await waitFor(() => tasks.length >= count + n, { what: `${n} task(s)` });
    return tasks.slice(count);
  };
  return { dir, tasks, logger, expectNothing, expectTasks, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const touch = (file: string) => {
  const t = new Date(Date.now() + 5000);
  utimesSync(file, t, t);
};

const template = suite('file-watch: template');

template('change → template-change; touch → nothing; rename-replace → template-change', async () => {
  const h = harness();
  const file = join(h.dir, 'nginx.tmpl');
  writeFileSync(file, 'v1');
  const sub = templateWatcher(file, { logger: h.logger, debounceMs: 20 }).subscribe((t) => h.tasks.push(t));
  try {
    let got = await h.expectTasks(1, () => writeFileSync(file, 'v2'));
    assert.equal(got, [{ kind: 'task', task: 'template-change', detail: file }]);

    await h.expectNothing(() => touch(file));
    await h.expectNothing(() => writeFileSync(file, 'v2'));

    got = await h.expectTasks(1, () => {
      writeFileSync(join(h.dir, '.nginx.tmpl.swp'), 'v3');
      renameSync(join(h.dir, '.nginx.tmpl.swp'), file);
    });
    assert.equal(got.map((t) => t.task), ['template-change']);

    got = await h.expectTasks(1, () => writeFileSync(file, 'v4'));
    assert.equal(got.length, 1, 'still watched after the rename');

    await h.expectNothing(() => {
      writeFileSync(join(h.dir, 'other.tmpl'), 'x');
      writeFileSync(file, 'v4');
    });
  } finally {
    sub.unsubscribe();
    h.cleanup();
  }
});

template('a burst of writes is one task', async () => {
  const h = harness();
  const file = join(h.dir, 'nginx.tmpl');
  writeFileSync(file, 'v1');
  const sub = templateWatcher(file, { logger: h.logger, debounceMs: 300 }).subscribe((t) => h.tasks.push(t));
  try {
    await h.expectTasks(1, () => {
      for (let i = 2; i < 6; i++) writeFileSync(file, `v${i}`);
    });
    await h.expectNothing(() => touch(file));
    assert.is(h.tasks.length, 1);
  } finally {
    sub.unsubscribe();
    h.cleanup();
  }
});

template('the debounce runs on the injected scheduler', async () => {
  const h = harness();
  const file = join(h.dir, 'nginx.tmpl');
  writeFileSync(file, 'v1');
  const scheduler = new VirtualTimeScheduler();
  const sub = templateWatcher(file, { logger: h.logger, debounceMs: 60_000, scheduler }).subscribe((t) => h.tasks.push(t));
  try {
    writeFileSync(file, 'v2');
    await waitFor(() => {
      scheduler.flush();
      return h.tasks.length === 1;
    }, { what: 'task after a virtual minute' });
    assert.ok(scheduler.frame >= 60_000);
  } finally {
    sub.unsubscribe();
    h.cleanup();
  }
});

const geoip = suite('file-watch: GeoIP');

geoip('a changed, added or removed .mmdb is a file-change; other files and touches are not', async () => {
  const h = harness();
  const city = join(h.dir, 'GeoLite2-City.mmdb');
  const asn = join(h.dir, 'GeoLite2-ASN.mmdb');
  writeFileSync(city, 'city-1');
  const sub = geoipWatcher(h.dir, { logger: h.logger, debounceMs: 20 }).subscribe((t) => h.tasks.push(t));
  try {
    let got = await h.expectTasks(1, () => writeFileSync(city, 'city-2'));
    assert.equal(got, [{ kind: 'task', task: 'file-change', detail: city }]);

    await h.expectNothing(() => touch(city));

    got = await h.expectTasks(1, () => {
      writeFileSync(join(h.dir, 'asn.tmp'), 'asn-1');
      renameSync(join(h.dir, 'asn.tmp'), asn);
    });
    assert.equal(got.map((t) => t.detail), [asn]);

    got = await h.expectTasks(1, () => unlinkSync(asn));
    assert.equal(got.map((t) => t.detail), [asn]);

    await h.expectNothing(() => {
      writeFileSync(join(h.dir, 'README.txt'), 'x');
      writeFileSync(city, 'city-2');
    });
  } finally {
    sub.unsubscribe();
    h.cleanup();
  }
});

template.run();
geoip.run();
