import { tracingConfig } from "./tracing-config";
import type { RequestTrace, RequestTracing } from "./request-trace";

/**
 * Request traces (docs/operations.md "Traces"): one span per inference request, a child per stage and
 * one per upstream attempt, exported over OTLP/HTTP when the OTEL_* variables turn it on.
 * This module loads no OpenTelemetry code: with tracing off the pipeline holds
 * `TRACING_OFF`, whose traces are one constant object of empty methods, and the SDK is
 * never imported (otel-tracing.ts comes in by dynamic import only when tracing is on).
 */

/** The trace of a request nobody traces: one constant object, nothing allocated per request. */
export const NO_TRACE: RequestTrace = { stage() {}, failed() {}, end() {} };

/** Tracing off: every request gets the same empty trace, so it costs a call to an empty method per hook. */
export const TRACING_OFF: RequestTracing = {
  start: () => NO_TRACE,
  shutdown: () => Promise.resolve(),
};

/**
 * Tracing as the OTEL_* variables say (tracing-config.ts): `TRACING_OFF` unless they turn
 * it on, and then the OpenTelemetry SDK with its OTLP/HTTP exporter. A malformed variable
 * throws, naming it.
 */
export async function startTracing(env: Record<string, string | undefined>): Promise<RequestTracing> {
  const config = tracingConfig(env);
  if (config === undefined) return TRACING_OFF;
  const { OtelTracing } = await import("./otel-tracing");
  return new OtelTracing(config);
}
