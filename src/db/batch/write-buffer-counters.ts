import { Counter, type Metrics } from "../../observability/metrics";

const counters = new WeakMap<Metrics, Map<string, Counter>>();

/**
 * The counter `name`, labelled by table, registered once per Metrics registry however
 * many write buffers (shards) count into it, so /metrics shows one series per table.
 */
export function tableCounter(metrics: Metrics, name: string, help: string): Counter {
  let byName = counters.get(metrics);
  if (byName === undefined) counters.set(metrics, (byName = new Map()));
  let counter = byName.get(name);
  if (counter === undefined) {
    counter = metrics.register(new Counter(name, help, ["table"]));
    byName.set(name, counter);
  }
  return counter;
}
