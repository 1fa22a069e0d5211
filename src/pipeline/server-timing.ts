import { PROTOCOL_IDS, type ProtocolId } from "../ir";
import type { AttemptRecord } from "../routing/attempt-record";

/** Where the gateway's overhead is observed (`switchyard_gateway_overhead_seconds`). */
export interface OverheadHistogram {
  observe(labels: string[], seconds: number): void;
}

/** The histogram's label values, made once: a request allocates no array for them. */
const LABELS = Object.fromEntries(
  PROTOCOL_IDS.map((client) => [client, Object.fromEntries([...PROTOCOL_IDS, "none"].map((upstream) => [upstream, [client, upstream]]))]),
) as Record<ProtocolId, Record<ProtocolId | "none", string[]>>;

/**
 * `Server-Timing` on an inference response whose head goes out now (docs/operations.md "The overhead, live (Server-Timing)"):
 * `gateway;dur=` the time since the request arrived less the time spent waiting for
 * upstreams, and, when an upstream was called, `upstream;dur=` that wait (every attempt's
 * `upstreamMs`, a fallback's included). The gateway part is observed in the overhead
 * histogram, labelled by the client's protocol and the last called upstream's ("none").
 * Costs a performance.now(), the header string and the histogram's label key.
 */
export function withServerTiming(
  histogram: OverheadHistogram,
  clientProtocol: ProtocolId,
  startedAt: number,
  attempts: readonly AttemptRecord[] | undefined,
  response: Response,
): Response {
  const totalMs = performance.now() - startedAt;
  let upstreamMs: number | undefined;
  let upstream: ProtocolId | "none" = "none";
  if (attempts !== undefined) {
    for (const attempt of attempts) {
      if (attempt.upstreamMs === undefined) continue;
      upstreamMs = (upstreamMs ?? 0) + attempt.upstreamMs;
      upstream = attempt.candidate.protocol;
    }
  }
  const gatewayMs = Math.max(0, totalMs - (upstreamMs ?? 0));
  histogram.observe(LABELS[clientProtocol][upstream], gatewayMs / 1000);
  response.headers.set(
    "server-timing",
    upstreamMs === undefined ? `gateway;dur=${gatewayMs.toFixed(3)}` : `gateway;dur=${gatewayMs.toFixed(3)}, upstream;dur=${upstreamMs.toFixed(3)}`,
  );
  return response;
}
