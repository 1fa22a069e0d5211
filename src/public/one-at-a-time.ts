/**
 * Runs the tasks given to it one after another, in arrival order. The public figures go
 * through one of these per read pool: their caches already share one computation per key
 * among concurrent callers, and this keeps the keys themselves (each `days` of the usage
 * statistics, the providers' window) from taking several read connections at once, so
 * anonymous callers hold at most one connection of the read pool, however many they are.
 * The queue is bounded by the number of distinct keys (91), not by the callers.
 */
export class OneAtATime {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    // The next task waits for this one to settle, not to succeed.
    this.tail = result.catch(() => {});
    return result;
  }
}
