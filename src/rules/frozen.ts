// Frozen collections for the rules snapshot: Object.freeze alone leaves a Map's or Set's contents
// mutable, so their mutators are replaced by ones that throw (only a deliberate
// `Map.prototype.set.call(…)` gets past that); deepFreeze freezes the validated JSON kept for status.

function refuse(): never {
  throw new TypeError('the rules snapshot is frozen');
}

export function frozenMap<K, V>(entries: Iterable<readonly [K, V]>): ReadonlyMap<K, V> {
  const map = new Map<K, V>(entries);
  for (const method of ['set', 'delete', 'clear']) Object.defineProperty(map, method, { value: refuse });
  return Object.freeze(map);
}

export function frozenSet<T>(values: Iterable<T>): ReadonlySet<T> {
  const set = new Set<T>(values);
  for (const method of ['add', 'delete', 'clear']) Object.defineProperty(set, method, { value: refuse });
  return Object.freeze(set);
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}
