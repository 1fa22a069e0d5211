import type { RateLimitToAdmit, RateWindow } from "../db/queries/admission";
import type { RateLimitHeadroom, RateLimitStatus } from "./admission-check";

/**
 * What a request's rate limits have left, from each clause's window as admission read it:
 * per dimension, the clause with the least left (docs/api/policies.md "Rate-limit headers"). The reset
 * is when the oldest admission the clause counts leaves its window, the moment room comes
 * back; a window that counts nothing has all its room now (0).
 */
export function rateLimitStatus(rates: readonly RateLimitToAdmit[], windows: readonly (RateWindow | undefined)[]): RateLimitStatus | undefined {
  if (rates.length === 0) return undefined;
  let requests: RateLimitHeadroom | undefined;
  let tokens: RateLimitHeadroom | undefined;
  rates.forEach((rate, index) => {
    const window = windows[index];
    const resetSecs = window?.resetSecs ?? 0;
    if (rate.maxRequests !== null) {
      const remaining = Math.max(0, rate.maxRequests - (window?.requests ?? 0));
      if (requests === undefined || remaining < requests.remaining) requests = { limit: rate.maxRequests, remaining, resetSecs };
    }
    if (rate.maxTokens !== null) {
      const remaining = Math.max(0, rate.maxTokens - (window?.tokens ?? 0));
      if (tokens === undefined || remaining < tokens.remaining) tokens = { limit: rate.maxTokens, remaining, resetSecs };
    }
  });
  return { ...(requests ? { requests } : {}), ...(tokens ? { tokens } : {}) };
}

/**
 * The windows of one set of clauses as this instance last read them, for requests
 * admitted from a lease without a database call. Approximate by design: each leased
 * admission is taken off the last reading, which does not see other instances'
 * admissions since, nor admissions leaving the window (so `remaining` errs low), and
 * counts the lease's whole chunk once a later batch reads the window.
 */
export class WindowReadings {
  private readonly readings = new Map<string, { windows: RateWindow[]; readAt: number }>();

  constructor(private readonly maxSets = 10_000) {}

  /** What a batch of `setKey` read (its rate limits' windows in order). */
  note(setKey: string, windows: readonly (RateWindow | undefined)[]): void {
    // Bounded: the sets of clauses are few; past the bound, start again rather than grow.
    if (this.readings.size >= this.maxSets && !this.readings.has(setKey)) this.readings.clear();
    this.readings.set(setKey, { windows: windows.map((window) => ({ requests: window?.requests ?? 0, tokens: window?.tokens ?? 0, resetSecs: window?.resetSecs ?? null })), readAt: Date.now() });
  }

  /** A leased admission of one request of `tokens`: counted in the reading, then the status from it. */
  admitLeased(setKey: string, rates: readonly RateLimitToAdmit[], tokens: number): RateLimitStatus | undefined {
    const reading = this.readings.get(setKey);
    if (reading === undefined) return rateLimitStatus(rates, []);
    const elapsedSecs = Math.floor((Date.now() - reading.readAt) / 1000);
    for (const window of reading.windows) {
      window.requests += 1;
      window.tokens += tokens;
    }
    return rateLimitStatus(
      rates,
      reading.windows.map((window) => ({ ...window, resetSecs: window.resetSecs === null ? null : Math.max(0, window.resetSecs - elapsedSecs) })),
    );
  }
}
