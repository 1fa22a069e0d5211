import { Histogram, type Metrics } from "./metrics";

/**
 * Event-loop delay: how late a timer set for every `intervalMs` fires. A request whose
 * answer is ready waits for whatever holds the JavaScript thread at that moment (a GC
 * pause, the encoding of a write buffer's flush, a burst of other requests' work), so this
 * is the part of the tail the gateway adds on its own thread. Exported as
 * `switchyard_event_loop_delay_seconds`; test/bench/tail.ts reads it under load and sets
 * it beside GC pauses and write flushes.
 *
 * One timer, re-armed from its own callback and unref'd (it never keeps the process up):
 * 200 wake-ups a second at the default, a cost below anything the bench can see.
 */
const DELAY_BUCKETS_SECONDS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1];

export interface EventLoopDelayProbe {
  /** The largest delay seen since the probe started, in seconds. */
  readonly maxSeconds: number;
  stop(): void;
}

export function startEventLoopDelayProbe(metrics: Metrics, intervalMs = 5): EventLoopDelayProbe {
  const histogram = metrics.register(
    new Histogram(
      "switchyard_event_loop_delay_seconds",
      `How late a timer due every ${intervalMs} ms fired on the server's JavaScript thread: what a ready answer can wait for the thread.`,
      [],
      DELAY_BUCKETS_SECONDS,
    ),
  );
  let max = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let due = 0;
  const arm = () => {
    due = performance.now() + intervalMs;
    timer = setTimeout(tick, intervalMs);
    timer.unref?.();
  };
  const tick = () => {
    const late = Math.max(0, performance.now() - due) / 1000;
    if (late > max) max = late;
    histogram.observe([], late);
    arm();
  };
  arm();
  return {
    get maxSeconds() {
      return max;
    },
    stop() {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    },
  };
}
