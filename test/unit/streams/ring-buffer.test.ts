// The ring buffer: 1024 slots in the pipeline; when full it drops the oldest skippable item,
// never a task.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createRingBuffer } from '../../../src/streams/ring-buffer.js';

const ring = suite('ring buffer');

ring('drops exactly the oldest skippable items when full, never the tasks', () => {
  const dropped: string[] = [];
  const r = createRingBuffer<{ id: string; skip: boolean }>({ capacity: 4, isSkippable: (x) => x.skip, onDrop: (x) => dropped.push(x.id) });
  r.push({ id: 't1', skip: false });
  r.push({ id: 'e1', skip: true });
  r.push({ id: 'e2', skip: true });
  r.push({ id: 't2', skip: false });
  r.push({ id: 'e3', skip: true }); // full: e1 goes
  r.push({ id: 'e4', skip: true }); // full: e2 goes
  assert.equal(dropped, ['e1', 'e2']);
  assert.equal(r.drain().map((x) => x.id), ['t1', 't2', 'e3', 'e4']);
  assert.is(r.size, 0);
  assert.is(r.dropped, 2);
});

ring('a ring full of tasks keeps growing with tasks and drops incoming skippable items', () => {
  const r = createRingBuffer<{ id: string; skip: boolean }>({ capacity: 2, isSkippable: (x) => x.skip });
  r.push({ id: 't1', skip: false });
  r.push({ id: 't2', skip: false });
  r.push({ id: 't3', skip: false });
  r.push({ id: 'e1', skip: true });
  assert.equal(r.drain().map((x) => x.id), ['t1', 't2', 't3']);
  assert.is(r.dropped, 1);
});

ring.run();
