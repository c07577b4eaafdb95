// V8 gives an array room for 17 elements at its first push and keeps that room for the array's
// life. The model keeps tens of thousands of small push-built arrays (a server's locations, an
// Ingress's hosts and paths, a backend's endpoints and users): ~7 MB of that room at 10k
// Ingresses. What the model keeps is copied to its exact size.

/** `list` without spare capacity: a copy (Array.prototype.slice allocates exactly its length). */
export function exactArray<T>(list: T[]): T[] {
  return list.length === 0 ? [] : list.slice();
}
