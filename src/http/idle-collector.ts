/** How long the server must have had no request in progress before it collects. */
export const IDLE_COLLECT_AFTER_MS = 2_000;

/**
 * A full collection of the request thread's heap once the server falls quiet after
 * serving requests. JavaScriptCore collects when allocation grows the heap, so a process
 * that stops allocating keeps whatever garbage its last busy seconds left: measured 10 s
 * after a burst at 64 connections, ~130 MB of resident memory that one collection gives
 * back to the system (test/bench/HISTORY.md). Under load the timer never fires (every
 * request start cancels it); an idle server that served nothing since the last collection
 * does not collect again.
 */
export class IdleCollector {
  private inProgress = 0;
  private servedSinceCollection = false;
  /** When the last request ended with none left in progress. */
  private quietSince = 0;
  private timer: Timer | undefined;

  /** `collect`: Bun.gc(true), replaced in tests. */
  constructor(
    private readonly collect: () => void = () => Bun.gc(true),
    private readonly quietMs = IDLE_COLLECT_AFTER_MS,
  ) {}

  /** Per request: two counter updates, no timer work (the hot path). */
  requestStarted(): void {
    this.inProgress++;
    this.servedSinceCollection = true;
  }

  requestEnded(): void {
    this.inProgress = Math.max(0, this.inProgress - 1);
    if (this.inProgress > 0) return;
    this.quietSince = performance.now();
    if (this.timer === undefined) this.schedule(this.quietMs);
  }

  /** One timer at a time; when it fires early (requests came and went meanwhile) it waits out the rest. */
  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.servedSinceCollection) return;
      if (this.inProgress > 0) return; // the request that ends last schedules again
      const quietFor = performance.now() - this.quietSince;
      if (quietFor < this.quietMs) return this.schedule(this.quietMs - quietFor);
      this.servedSinceCollection = false;
      this.collect();
    }, delayMs);
    // A pending collection never keeps a stopping process alive.
    this.timer.unref();
  }
}
