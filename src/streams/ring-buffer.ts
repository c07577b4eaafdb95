// The 1024-slot ring between the store and the token bucket. When full, the oldest skippable
// item is dropped (a later sync reads the whole store, so nothing is lost but the trigger);
// non-skippable tasks are never dropped, so the ring exceeds its capacity only with tasks.

export interface RingBuffer<T> {
  push(item: T): void;
  /** Takes everything queued, oldest first. */
  drain(): T[];
  readonly size: number;
  readonly dropped: number;
}

export interface RingBufferOptions<T> {
  capacity: number;
  isSkippable: (item: T) => boolean;
  onDrop?: (item: T) => void;
}

export function createRingBuffer<T>(opts: RingBufferOptions<T>): RingBuffer<T> {
  if (!(opts.capacity >= 1)) throw new Error(`ring capacity must be ≥ 1, got ${opts.capacity}`);
  let items: T[] = [];
  let dropped = 0;

  const drop = (item: T) => {
    dropped++;
    opts.onDrop?.(item);
  };

  return {
    push(item) {
      if (items.length >= opts.capacity) {
        const oldest = items.findIndex(opts.isSkippable);
        if (oldest >= 0) drop(items.splice(oldest, 1)[0]);
        else if (opts.isSkippable(item)) return drop(item); // full of tasks: drop the newcomer
      }
      items.push(item);
    },
    drain() {
      const out = items;
      items = [];
      return out;
    },
    get size() { return items.length; },
    get dropped() { return dropped; },
  };
}
