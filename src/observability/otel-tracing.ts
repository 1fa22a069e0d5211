import { DiagLogLevel, diag, type Tracer } from "@opentelemetry/api";
import { parseKeyPairsIntoRecord } from "@opentelemetry/core";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from "@opentelemetry/sdk-trace";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import type { ProtocolId } from "../ir";
import { log } from "./log";
import type { TracingConfig } from "./tracing-config";
import type { RequestTrace, RequestTracing } from "./request-trace";
import { SpanningTrace } from "./request-spans";

/** The longest shutdown waits for the last spans to reach the collector: a dead one must not hold the exit. */
const SHUTDOWN_FLUSH_MS = 3_000;

function samplerFor(config: TracingConfig): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return ratio();
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: ratio() });
  }
}

function exporterFor(config: TracingConfig): SpanExporter {
  const options = { url: config.endpoint };
  return config.protocol === "http/json" ? new JsonTraceExporter(options) : new ProtobufTraceExporter(options);
}

/**
 * The OpenTelemetry SDK behind `RequestTracing` (loaded only when tracing is on). Spans
 * leave through a batch span processor: a bounded queue (`OTEL_BSP_MAX_QUEUE_SIZE`,
 * dropping past it) exported off the request path, so a slow or dead collector costs the
 * gateway neither time nor memory beyond the queue. The provider is this server's own (not
 * registered globally), so servers in one process keep their traces apart.
 */
export class OtelTracing implements RequestTracing {
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;

  constructor(config: TracingConfig) {
    // The SDK's own complaints (a failed export, spans dropped at the queue's bound) go to our log.
    diag.setLogger(
      { error: (message) => log.warn("tracing", { detail: message }), warn: (message) => log.warn("tracing", { detail: message }), info() {}, debug() {}, verbose() {} },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
    const resource = defaultResource()
      .merge(resourceFromAttributes({ "service.name": "switchyard" }))
      .merge(resourceFromAttributes(parseKeyPairsIntoRecord(config.resourceAttributes)))
      .merge(resourceFromAttributes(config.serviceName === undefined ? {} : { "service.name": config.serviceName }));
    this.provider = new TracerProvider({
      resource,
      sampler: samplerFor(config),
      spanProcessors: [new BatchSpanProcessor({ exporter: exporterFor(config), ...config.batch })],
    });
    this.tracer = this.provider.getTracer("switchyard");
    log.info("tracing on", { endpoint: config.endpoint, protocol: config.protocol, sampler: config.sampler });
  }

  start(request: Request, protocol: ProtocolId, requestId: string, startedAt: number): RequestTrace {
    return new SpanningTrace(this.tracer, request, protocol, requestId, startedAt);
  }

  async shutdown(): Promise<void> {
    const flushed = this.provider.shutdown().catch((error: unknown) => log.warn("tracing: the last spans were not exported", { error: String(error) }));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS)));
    await Promise.race([flushed, limit]);
    clearTimeout(timer);
  }
}
