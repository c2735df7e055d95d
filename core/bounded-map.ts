/**
 * Maps and sets kept to a bound by dropping their oldest entries. A Map and a
 * Set iterate in insertion order, so the first key is the one set longest
 * ago, and setting a key again (`setNewest`) makes it the last to go: a
 * least-recently-set bound, with no list of its own to keep.
 */
export function dropOldest<K>(entries: Map<K, unknown> | Set<K>, max: number): void {
  while (entries.size > max) entries.delete(entries.keys().next().value as K);
}

/** Sets `key` as the map's newest entry, dropping the oldest past `max`. */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  dropOldest(map, max);
}
