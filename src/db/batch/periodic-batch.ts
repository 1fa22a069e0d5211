import { log } from "../../observability/log";

/** What a PeriodicBatch writes, and how it keeps what it could not write. */
export interface PeriodicBatchOptions<Entry> {
  intervalMs: number;
  /** Writes one batch. A batch put back after a failure is written again: the write must allow that. */
  write(batch: ReadonlyMap<string, Entry>): Promise<void>;
  /** A failed batch's entry put back, merged with `current`, what arrived under its key meanwhile. */
  putBack(failed: Entry, current: Entry | undefined): Entry;
  /** The warning logged when a write fails. */
  failure: string;
}

/**
 * Figures noted in memory by key and written as one batch every `intervalMs` (and at
 * stop) instead of one write each, where a few seconds' delay is fine: a credential's last
 * use, the refusals counted without a record. A write that fails puts its entries back,
 * merged with what arrived meanwhile, for the next tick.
 */
export class PeriodicBatch<Entry> {
  private pending = new Map<string, Entry>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly options: PeriodicBatchOptions<Entry>) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.options.intervalMs);
    this.timer.unref?.();
  }

  /** The entry waiting under `key`, if any (to add to it in place). */
  get(key: string): Entry | undefined {
    return this.pending.get(key);
  }

  set(key: string, entry: Entry): void {
    this.pending.set(key, entry);
  }

  /** Writes the entries noted so far; false when that failed and they wait for the next tick. */
  async flush(): Promise<boolean> {
    if (this.pending.size === 0) return true;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.options.write(batch);
      return true;
    } catch (error) {
      for (const [key, entry] of batch) this.pending.set(key, this.options.putBack(entry, this.pending.get(key)));
      log.warn(this.options.failure, { error: String(error) });
      return false;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
