/**
 * Group commit: items submitted under one key while a call for that key is in flight wait
 * and go together in the next call, in the order they were submitted. At most one call per
 * key is in flight, so a hot key costs one database call per batch rather than one per
 * item, and its callers stop queueing on the database's row lock one connection each.
 * Different keys never wait for each other.
 *
 * `run` gets the items of one key and returns one result per item, in the same order.
 * When it throws, every item of that call gets the error; nothing is retried here.
 */
export class GroupCommit<Item, Result> {
  private readonly queues = new Map<string, Queued<Item, Result>[]>();
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly run: (items: Item[]) => Promise<Result[]>,
    /** The most items one call carries; more wait for the next call. */
    private readonly maxBatch: number,
  ) {}

  submit(key: string, item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) queue.push({ item, resolve, reject });
      else this.queues.set(key, [{ item, resolve, reject }]);
      if (!this.inFlight.has(key)) void this.drain(key);
    });
  }

  private async drain(key: string): Promise<void> {
    this.inFlight.add(key);
    try {
      for (let queue = this.queues.get(key); queue !== undefined && queue.length > 0; queue = this.queues.get(key)) {
        const batch = queue.splice(0, this.maxBatch);
        if (queue.length === 0) this.queues.delete(key);
        try {
          const results = await this.run(batch.map((queued) => queued.item));
          batch.forEach((queued, i) => queued.resolve(results[i]!));
        } catch (error) {
          for (const queued of batch) queued.reject(error);
        }
      }
    } finally {
      this.inFlight.delete(key);
    }
  }
}

interface Queued<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}
