import type { BudgetWindow } from "../policy/policy-spec";

/**
 * How each budget window is measured. `day` and `month` are rolling (the last 24 hours,
 * the last 30 days): their spend is the sum of the spend buckets that end inside the
 * window. A bucket holds the charges of requests that started in it, so a charge leaves
 * the window up to one bucket later than it exactly would: the window is read at most
 * one bucket wide too long, which can refuse early (by that bucket's spend) but never
 * admit more than the limit. `total` is the counter's lifetime sum; its buckets only
 * keep history in case the policy's window is changed later.
 */
export interface BudgetWindowRule {
  /** The window's length; 0 for `total`. */
  windowSecs: number;
  /** The width of the spend buckets a settled charge lands in. */
  bucketSecs: number;
}

export const BUDGET_WINDOWS: Record<BudgetWindow, BudgetWindowRule> = {
  // 145 buckets at most per read; a charge leaves the window up to 10 minutes late.
  day: { windowSecs: 24 * 60 * 60, bucketSecs: 10 * 60 },
  // 145 buckets at most per read; a charge leaves the window up to 5 hours late.
  month: { windowSecs: 30 * 24 * 60 * 60, bucketSecs: 5 * 60 * 60 },
  total: { windowSecs: 0, bucketSecs: 24 * 60 * 60 },
};

/** Buckets older than the longest window plus its bucket can no longer be read. */
export const SPEND_RETENTION_SECS = BUDGET_WINDOWS.month.windowSecs + BUDGET_WINDOWS.month.bucketSecs;
