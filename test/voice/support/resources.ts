import assert from 'node:assert/strict';

/** How many of each kind of active handle or request the process holds (sockets, timers, ...). */
export function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/**
 * Fails when the process holds more of some kind of resource than it did at `before`. Fewer is
 * fine: what earlier tests left closing may have finished meanwhile.
 */
export function assertNoNewResources(before: Map<string, number>): void {
  const now = activeResources();
  const grown = [...now].filter(([kind, count]) => count > (before.get(kind) ?? 0));
  assert.deepEqual(grown, [], `resources left behind (before: ${JSON.stringify([...before])}, now: ${JSON.stringify([...now])})`);
}
