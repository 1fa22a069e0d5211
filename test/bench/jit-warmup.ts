/**
 * Warm a gateway up until JavaScriptCore has stopped compiling, so what the bench measures
 * is a long-running gateway's steady state and not its JIT warm-up.
 *
 * Why not a fixed time: code that runs per metering flush or per stream end runs tens of
 * times a second, not per request, and the DFG/FTL tiers compile it only after thousands of
 * calls. Measured at 16 streaming connections (23:31–23:33 UTC, 2026-11-28): after the old
 * fixed 6 s of load the metered gateway's JIT compiler threads still took 97–103 µs of CPU
 * per stream during the measured slices (of 553–612 µs in all); after 30 s they took 7.8 µs
 * (of 401 µs). A gateway that has served for a minute never pays that again, so counting
 * it overstated the gateway's CPU by a fifth.
 */
import { runLanes, type Target } from "./load";
import { threadDelta, threadTicksById, TICKS_PER_SECOND } from "./process-cpu";

/** JavaScriptCore's compiler threads ("JITWorker"), by thread id: they come and go, so read with threadDelta. */
export function jitTicks(pid: number): Map<string, number> {
  return threadTicksById(pid, "JIT");
}

export interface WarmupResult {
  /** How long the gateway was loaded before its compiler fell quiet (or the cap was reached). */
  seconds: number;
  /** The compiler threads' share of one core over the last round. */
  lastJitShare: number;
  quiet: boolean;
}

/**
 * Rounds of `roundMs` of load on each target in turn until two whole rounds in a row pass
 * with the gateway's compiler threads under `quietShare` of one core (2 %: the floor measured after
 * 30 s of load, one compile now and then), after at least `minMs`, at most `maxMs`.
 */
export async function warmUntilJitQuiet(
  pid: number,
  targets: readonly Target[],
  lanes: number,
  options: { minMs: number; maxMs: number; roundMs?: number; quietShare?: number },
): Promise<WarmupResult> {
  const roundMs = options.roundMs ?? 1_000;
  const quietShare = options.quietShare ?? 0.02;
  const started = performance.now();
  let lastJitShare = Number.NaN;
  let quietRounds = 0;
  for (;;) {
    const ticksBefore = jitTicks(pid);
    const roundStarted = performance.now();
    for (const target of targets) await runLanes(target, lanes, roundMs);
    const roundSeconds = (performance.now() - roundStarted) / 1000;
    lastJitShare = threadDelta(ticksBefore, jitTicks(pid)) / TICKS_PER_SECOND / roundSeconds;
    const elapsed = performance.now() - started;
    // Compilation comes in bursts: two quiet rounds in a row, not one.
    quietRounds = lastJitShare <= quietShare ? quietRounds + 1 : 0;
    const quiet = quietRounds >= 2;
    if ((quiet && elapsed >= options.minMs) || elapsed >= options.maxMs) return { seconds: elapsed / 1000, lastJitShare, quiet };
  }
}
