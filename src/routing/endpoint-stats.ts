/**
 * Rolling per-endpoint telemetry for routing (latency and throughput over a rolling
 * hour) and for the public provider stats (request count, success rate, p50 latency).
 *
 * Memory is bounded: each endpoint key owns a ring of fixed time buckets (default 60 × 1
 * minute) and each bucket keeps at most `reservoirSize` samples per metric (reservoir
 * sampling), so neither traffic nor uptime grows it. A bucket counts while its start is
 * within the window, so data leaves between `windowMs - bucketMs` and `windowMs` after it
 * was recorded. Per-process only: routing needs a fresh local view, not a shared one.
 */

export type AttemptOutcome = "success" | "provider_error" | "timeout";

export interface AttemptSample {
  outcome: AttemptOutcome;
  /** From sending the request to the end of the response. */
  latencyMs?: number;
  /** From sending the request to the first output token. */
  ttftMs?: number;
  /** Output tokens per second of generation (after the first token). */
  outputTokensPerSecond?: number;
}

export interface EndpointStatsSnapshot {
  /** Attempts of every outcome in the window. */
  requestCount: number;
  successCount: number;
  /** success / (success + provider_error + timeout); 0 when there were none. */
  successRate: number;
  /** Medians over successful attempts; undefined when none reported the metric (unknown is not zero). */
  p50LatencyMs: number | undefined;
  p50TtftMs: number | undefined;
  outputTokensPerSecond: number | undefined;
}

export interface EndpointStatsOptions {
  windowMs?: number;
  /** How long a computed snapshot is reused; 0 (the default) recomputes on every call. */
  snapshotTtlMs?: number;
  bucketMs?: number;
  reservoirSize?: number;
  now?: () => number;
  /** A number in [0, 1); replaceable so tests are deterministic. */
  random?: () => number;
}

const METRICS = ["latencyMs", "ttftMs", "outputTokensPerSecond"] as const;
type Metric = (typeof METRICS)[number];

interface Reservoir {
  /** Values offered, including those not kept. */
  seen: number;
  kept: number[];
}

interface Bucket {
  /** floor(time / bucketMs) of the bucket's start; the slot is stale when it differs from the current period. */
  period: number;
  success: number;
  providerError: number;
  timeout: number;
  reservoirs: Record<Metric, Reservoir>;
}

const EMPTY_SNAPSHOT: EndpointStatsSnapshot = {
  requestCount: 0,
  successCount: 0,
  successRate: 0,
  p50LatencyMs: undefined,
  p50TtftMs: undefined,
  outputTokensPerSecond: undefined,
};

export class EndpointStats {
  readonly windowMs: number;
  readonly bucketMs: number;
  private readonly bucketCount: number;
  private readonly reservoirSize: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly rings = new Map<string, Array<Bucket | undefined>>();
  private readonly snapshots = new Map<string, { at: number; value: EndpointStatsSnapshot }>();
  private readonly snapshotTtlMs: number;

  constructor(options: EndpointStatsOptions = {}) {
    this.windowMs = options.windowMs ?? 60 * 60 * 1000;
    this.bucketMs = options.bucketMs ?? 60 * 1000;
    this.reservoirSize = options.reservoirSize ?? 32;
    if (!(this.bucketMs > 0) || !(this.windowMs >= this.bucketMs) || !(this.reservoirSize >= 1)) {
      throw new Error("EndpointStats needs bucketMs > 0, windowMs >= bucketMs and reservoirSize >= 1");
    }
    this.bucketCount = Math.ceil(this.windowMs / this.bucketMs);
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.snapshotTtlMs = options.snapshotTtlMs ?? 0;
  }

  /** Records one upstream attempt for the endpoint `${provider}/${providerModelId}`. */
  record(key: string, sample: AttemptSample): void {
    const bucket = this.currentBucket(key);
    if (sample.outcome === "success") bucket.success += 1;
    else if (sample.outcome === "provider_error") bucket.providerError += 1;
    else bucket.timeout += 1;
    // Durations of failed attempts say how the endpoint fails, not how fast it serves; the
    // success rate already accounts for failures.
    if (sample.outcome !== "success") return;
    for (const metric of METRICS) {
      const value = sample[metric];
      if (value !== undefined && Number.isFinite(value) && value >= 0) this.offer(bucket.reservoirs[metric], value);
    }
  }

  /**
   * The window's figures for one endpoint. Medians cost a sort, and routing asks on
   * every request, so a snapshot is reused for `snapshotTtlMs` (telemetry that is a
   * second old ranks endpoints just as well).
   */
  snapshot(key: string): EndpointStatsSnapshot {
    const now = this.now();
    if (this.snapshotTtlMs <= 0) return this.computeSnapshot(key);
    const cached = this.snapshots.get(key);
    if (cached !== undefined && now - cached.at < this.snapshotTtlMs) return cached.value;
    const value = this.computeSnapshot(key);
    this.snapshots.set(key, { at: now, value });
    return value;
  }

  private computeSnapshot(key: string): EndpointStatsSnapshot {
    const ring = this.rings.get(key);
    if (ring === undefined) return { ...EMPTY_SNAPSHOT };
    const live = this.liveBuckets(ring);
    if (live.length === 0) {
      this.rings.delete(key); // nothing left in the window: release the ring
      return { ...EMPTY_SNAPSHOT };
    }
    let success = 0;
    let attempts = 0;
    for (const bucket of live) {
      success += bucket.success;
      attempts += bucket.success + bucket.providerError + bucket.timeout;
    }
    return {
      requestCount: attempts,
      successCount: success,
      successRate: attempts === 0 ? 0 : success / attempts,
      p50LatencyMs: weightedMedian(live.map((b) => b.reservoirs.latencyMs)),
      p50TtftMs: weightedMedian(live.map((b) => b.reservoirs.ttftMs)),
      outputTokensPerSecond: weightedMedian(live.map((b) => b.reservoirs.outputTokensPerSecond)),
    };
  }

  /** Endpoint keys with data recorded (some may have aged out since). */
  keys(): string[] {
    return [...this.rings.keys()];
  }

  private currentBucket(key: string): Bucket {
    const period = Math.floor(this.now() / this.bucketMs);
    let ring = this.rings.get(key);
    if (ring === undefined) {
      ring = new Array<Bucket | undefined>(this.bucketCount).fill(undefined);
      this.rings.set(key, ring);
    }
    const slot = ((period % this.bucketCount) + this.bucketCount) % this.bucketCount;
    const existing = ring[slot];
    if (existing !== undefined && existing.period === period) return existing;
    const fresh: Bucket = {
      period,
      success: 0,
      providerError: 0,
      timeout: 0,
      reservoirs: { latencyMs: emptyReservoir(), ttftMs: emptyReservoir(), outputTokensPerSecond: emptyReservoir() },
    };
    ring[slot] = fresh;
    return fresh;
  }

  private liveBuckets(ring: ReadonlyArray<Bucket | undefined>): Bucket[] {
    const current = Math.floor(this.now() / this.bucketMs);
    return ring.filter((b): b is Bucket => b !== undefined && b.period <= current && b.period > current - this.bucketCount);
  }

  /** Algorithm R: every value offered so far has the same chance to be kept. */
  private offer(reservoir: Reservoir, value: number): void {
    reservoir.seen += 1;
    if (reservoir.kept.length < this.reservoirSize) {
      reservoir.kept.push(value);
      return;
    }
    const index = Math.floor(this.random() * reservoir.seen);
    if (index < this.reservoirSize) reservoir.kept[index] = value;
  }
}

function emptyReservoir(): Reservoir {
  return { seen: 0, kept: [] };
}

/**
 * The median across buckets, each kept value standing for `seen / kept` values, so a busy
 * minute counts for its traffic rather than for its reservoir size.
 */
function weightedMedian(reservoirs: Reservoir[]): number | undefined {
  const points: Array<{ value: number; weight: number }> = [];
  let total = 0;
  for (const reservoir of reservoirs) {
    if (reservoir.kept.length === 0) continue;
    const weight = reservoir.seen / reservoir.kept.length;
    for (const value of reservoir.kept) points.push({ value, weight });
    total += reservoir.seen;
  }
  if (points.length === 0) return undefined;
  points.sort((a, b) => a.value - b.value);
  const half = total / 2;
  let cumulative = 0;
  for (let i = 0; i < points.length; i += 1) {
    const point = points[i]!;
    cumulative += point.weight;
    if (cumulative > half) return point.value;
    // Exactly half: the median sits between this value and the next (even count).
    if (cumulative === half) {
      const next = points[i + 1];
      return next === undefined ? point.value : (point.value + next.value) / 2;
    }
  }
  return points[points.length - 1]!.value;
}
