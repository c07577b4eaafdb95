// V8 gives an array room for 17 elements at its first push and keeps that room for the array's
// life. The builder keeps tens of thousands of small push-built arrays for the controller's
// life (an Ingress fragment's hosts and paths, the topology cache's inputs): ~3.6 MB of that
// room at 10k Ingresses. Those are copied to their exact size where the builder keeps them.

/** `list` without spare capacity: a copy (Array.prototype.slice allocates exactly its length). */
export function exactArray<T>(list: T[]): T[] {
  return list.length === 0 ? [] : list.slice();
}
