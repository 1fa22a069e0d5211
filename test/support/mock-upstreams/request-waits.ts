/**
 * Waits inside a request handler ("slow" first byte, "hang") that end early when the
 * client aborts or the mock closes, so no timer or promise outlives its request.
 */
export class RequestWaits {
  private readonly pending = new Set<() => void>();

  /** Resolves after `ms` (Infinity: never by itself), on client abort, or on `releaseAll`. */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = () => {
        if (timer !== undefined) clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.pending.delete(done);
        resolve();
      };
      if (Number.isFinite(ms)) timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener("abort", done, { once: true });
      this.pending.add(done);
    });
  }

  /** Ends every pending wait (the mock is closing). */
  releaseAll(): void {
    for (const done of [...this.pending]) done();
  }

  get size(): number {
    return this.pending.size;
  }
}
