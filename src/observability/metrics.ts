/**
 * A small Prometheus registry (text exposition format 0.0.4). Counters and
 * histograms keyed by label values; no per-request allocation beyond the label key.
 */
/** The gateway's own time per request is well under a millisecond when all is well. */
const OVERHEAD_BUCKETS_SECONDS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const LATENCY_BUCKETS_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function labelText(names: readonly string[], values: readonly string[]): string {
  if (names.length === 0) return "";
  return "{" + names.map((name, i) => `${name}="${escapeLabel(values[i] ?? "")}"`).join(",") + "}";
}

class Counter {
  private values = new Map<string, { labels: string[]; value: number }>();
  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly string[]) {}
  inc(labels: string[] = [], by = 1): void {
    const key = labels.join("\u0000");
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { labels, value: by });
  }
  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} counter\n`;
    for (const { labels, value } of this.values.values()) out += `${this.name}${labelText(this.labelNames, labels)} ${value}\n`;
    return out;
  }
}

class Gauge {
  private readers: Array<{ labels: string[]; read: () => number }> = [];
  private value = 0;
  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly string[] = []) {}
  inc(): void { this.value++; }
  dec(): void { this.value--; }
  /**
   * A gauge whose value is read from elsewhere at scrape time (buffer sizes). Readers
   * tracked with the same labels add up to one series (a table's rows in every shard).
   */
  track(labels: string[], read: () => number): void { this.readers.push({ labels, read }); }
  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} gauge\n`;
    if (this.readers.length === 0) return out + `${this.name} ${this.value}\n`;
    const series = new Map<string, number>();
    for (const { labels, read } of this.readers) {
      const key = labelText(this.labelNames, labels);
      series.set(key, (series.get(key) ?? 0) + read());
    }
    for (const [labels, value] of series) out += `${this.name}${labels} ${value}\n`;
    return out;
  }
}

class Histogram {
  private series = new Map<string, { labels: string[]; counts: number[]; sum: number; count: number }>();
  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly string[], readonly buckets = LATENCY_BUCKETS_SECONDS) {}
  observe(labels: string[], value: number): void {
    const key = labels.join("\u0000");
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels, counts: new Array(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.series.set(key, entry);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) entry.counts[i]!++;
    entry.sum += value;
    entry.count++;
  }
  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} histogram\n`;
    for (const { labels, counts, sum, count } of this.series.values()) {
      for (let i = 0; i < this.buckets.length; i++) {
        out += `${this.name}_bucket${labelText([...this.labelNames, "le"], [...labels, String(this.buckets[i])])} ${counts[i]}\n`;
      }
      out += `${this.name}_bucket${labelText([...this.labelNames, "le"], [...labels, "+Inf"])} ${count}\n`;
      out += `${this.name}_sum${labelText(this.labelNames, labels)} ${sum}\n`;
      out += `${this.name}_count${labelText(this.labelNames, labels)} ${count}\n`;
    }
    return out;
  }
}

export class Metrics {
  readonly httpRequests = new Counter("switchyard_http_requests_total", "HTTP requests by route, method and status.", ["route", "method", "status"]);
  readonly httpDuration = new Histogram("switchyard_http_request_duration_seconds", "Time to the response head, by route.", ["route", "method"]);
  readonly inFlight = new Gauge("switchyard_http_requests_in_flight", "Requests being served now, streams included.");
  readonly buffered = new Gauge("switchyard_buffered_rows", "Rows waiting in write buffers, by table.", ["table"]);
  readonly upstreamAttempts = new Counter("switchyard_upstream_attempts_total", "Upstream attempts by provider and outcome (success, provider_error, timeout, client_error, aborted).", ["provider", "outcome"]);
  /** Server-Timing's `gateway` part of every inference response (src/pipeline/server-timing.ts). */
  readonly gatewayOverhead = new Histogram(
    "switchyard_gateway_overhead_seconds",
    "Time an inference request spent in the gateway before its response head, not counting the wait for upstreams, by client and upstream protocol (none: no upstream was called).",
    ["client_protocol", "upstream_protocol"],
    OVERHEAD_BUCKETS_SECONDS,
  );
  readonly writeFailures = new Counter("switchyard_write_failures_total", "Failed batch writes (rows are kept and retried), by table.", ["table"]);
  /** How long rows wait for the database after a request: a flush's rows plus those that arrive while it runs. */
  readonly writeFlushDuration = new Histogram("switchyard_write_flush_seconds", "Time a committed write-buffer flush took, from its start to its commit (every table's rows in one transaction).", []);
  private extra: Array<{ render(): string }> = [];

  register<T extends { render(): string }>(metric: T): T {
    this.extra.push(metric);
    return metric;
  }

  render(): string {
    return [this.httpRequests, this.httpDuration, this.gatewayOverhead, this.inFlight, this.upstreamAttempts, this.buffered, this.writeFailures, this.writeFlushDuration, ...this.extra].map((m) => m.render()).join("");
  }
}

export { Counter, Gauge, Histogram };
