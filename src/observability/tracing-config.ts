/**
 * Tracing settings from the OpenTelemetry SDK environment variables (the OpenTelemetry
 * specification's "Environment Variable Specification" and "OTLP Exporter Configuration").
 * One deliberate difference: tracing is off unless asked for. It is on when
 * `OTEL_TRACES_EXPORTER=otlp`, or when that is unset and an OTLP endpoint variable is set;
 * `OTEL_TRACES_EXPORTER=none` or `OTEL_SDK_DISABLED=true` keeps it off. A value we cannot
 * honour (another exporter, the gRPC protocol, a sampler name we do not know, a number that
 * is not one) stops the start with its name, as every other setting does (src/config.ts).
 *
 * The exporter itself reads the rest of its variables (`OTEL_EXPORTER_OTLP_HEADERS`,
 * `…_TIMEOUT`, `…_COMPRESSION`, `…_CERTIFICATE` and their `…_TRACES_…` forms).
 */

export type TraceSamplerName =
  | "always_on"
  | "always_off"
  | "traceidratio"
  | "parentbased_always_on"
  | "parentbased_always_off"
  | "parentbased_traceidratio";

export interface TracingConfig {
  /** The full URL spans are POSTed to. */
  endpoint: string;
  protocol: "http/protobuf" | "http/json";
  /** `OTEL_SERVICE_NAME`; unset: `service.name` from `OTEL_RESOURCE_ATTRIBUTES`, else "switchyard". */
  serviceName: string | undefined;
  /** `OTEL_RESOURCE_ATTRIBUTES`, as written (`key=value,…`). */
  resourceAttributes: string | undefined;
  sampler: TraceSamplerName;
  /** For the ratio samplers: the share of traces kept, 0 to 1. */
  samplerRatio: number;
  /** The batch span processor's bounds: a slow or dead collector drops spans past `maxQueueSize`, it never holds requests. */
  batch: { scheduledDelayMillis: number; exportTimeoutMillis: number; maxQueueSize: number; maxExportBatchSize: number };
}

const SAMPLERS: readonly TraceSamplerName[] = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"];
/** The specification's default for OTLP over HTTP; `/v1/traces` is appended to the general endpoint only. */
const DEFAULT_ENDPOINT = "http://localhost:4318";

type Env = Record<string, string | undefined>;

function setting(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function count(env: Env, name: string, fallback: number, min: number): number {
  const raw = setting(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name} must be an integer of at least ${min}, got "${raw}"`);
  return value;
}

function url(name: string, raw: string): string {
  if (!URL.canParse(raw) || !/^https?:$/.test(new URL(raw).protocol)) throw new Error(`${name} must be an http(s) URL, got "${raw}"`);
  return raw;
}

/** The settings, or undefined when tracing is off. */
export function tracingConfig(env: Env): TracingConfig | undefined {
  if (setting(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined;
  const exporters = setting(env, "OTEL_TRACES_EXPORTER")?.split(",").map((name) => name.trim().toLowerCase());
  const unsupported = exporters?.filter((name) => name !== "otlp" && name !== "none");
  if (unsupported !== undefined && unsupported.length > 0) {
    throw new Error(`OTEL_TRACES_EXPORTER must be "otlp" or "none" (the OTLP/HTTP exporter is the only one built in), got "${env.OTEL_TRACES_EXPORTER}"`);
  }
  const tracesEndpoint = setting(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const generalEndpoint = setting(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  const on = exporters === undefined ? tracesEndpoint !== undefined || generalEndpoint !== undefined : exporters.includes("otlp");
  if (!on) return undefined;

  const protocol = setting(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? setting(env, "OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL must be "http/protobuf" or "http/json" (gRPC is not built in), got "${protocol}"`);
  }
  const sampler = (setting(env, "OTEL_TRACES_SAMPLER") ?? "parentbased_always_on") as TraceSamplerName;
  if (!SAMPLERS.includes(sampler)) throw new Error(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(", ")}, got "${sampler}"`);
  const ratioRaw = sampler.endsWith("traceidratio") ? setting(env, "OTEL_TRACES_SAMPLER_ARG") : undefined;
  const samplerRatio = ratioRaw === undefined ? 1 : Number(ratioRaw);
  if (!(samplerRatio >= 0 && samplerRatio <= 1)) throw new Error(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, got "${ratioRaw}"`);

  const maxQueueSize = count(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048, 1);
  return {
    endpoint: tracesEndpoint !== undefined
      ? url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", tracesEndpoint)
      : `${url("OTEL_EXPORTER_OTLP_ENDPOINT", generalEndpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, "")}/v1/traces`,
    protocol,
    serviceName: setting(env, "OTEL_SERVICE_NAME"),
    resourceAttributes: setting(env, "OTEL_RESOURCE_ATTRIBUTES"),
    sampler,
    samplerRatio,
    batch: {
      scheduledDelayMillis: count(env, "OTEL_BSP_SCHEDULE_DELAY", 5_000, 0),
      exportTimeoutMillis: count(env, "OTEL_BSP_EXPORT_TIMEOUT", 30_000, 1),
      maxQueueSize,
      maxExportBatchSize: Math.min(maxQueueSize, count(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512, 1)),
    },
  };
}
