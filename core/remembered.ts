/**
 * `compute`, remembering its answers for up to `max` keys (then forgetting them all at once and starting
 * again): for work repeated on every request over the few values clients send (a header, an address).
 */
export function remembered<K, V>(compute: (key: K) => V, max: number): (key: K) => V {
  const kept = new Map<K, V>();
  return (key) => {
    if (kept.has(key)) return kept.get(key)!;
    if (kept.size >= max) kept.clear();
    const value = compute(key);
    kept.set(key, value);
    return value;
  };
}
