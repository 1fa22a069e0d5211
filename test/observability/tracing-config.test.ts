import { describe, expect, test } from "bun:test";
import { tracingConfig } from "../../src/observability/tracing-config";

describe("tracing settings from the OTEL_* variables", () => {
  test("tracing is off when nothing asks for it, and when asked to stay off", () => {
    expect(tracingConfig({})).toBeUndefined();
    expect(tracingConfig({ OTEL_SERVICE_NAME: "gateway" })).toBeUndefined();
    expect(tracingConfig({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBeUndefined();
    expect(tracingConfig({ OTEL_SDK_DISABLED: "true", OTEL_TRACES_EXPORTER: "otlp" })).toBeUndefined();
  });

  test("OTEL_TRACES_EXPORTER=otlp turns it on with the specification's defaults", () => {
    expect(tracingConfig({ OTEL_TRACES_EXPORTER: "otlp" })).toEqual({
      endpoint: "http://localhost:4318/v1/traces",
      protocol: "http/protobuf",
      serviceName: undefined,
      resourceAttributes: undefined,
      sampler: "parentbased_always_on",
      samplerRatio: 1,
      batch: { scheduledDelayMillis: 5000, exportTimeoutMillis: 30000, maxQueueSize: 2048, maxExportBatchSize: 512 },
    });
  });

  test("an OTLP endpoint alone turns it on; the general one gets /v1/traces, the traces one is used as written", () => {
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.internal:4318/" })?.endpoint).toBe("https://collector.internal:4318/v1/traces");
    expect(tracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector/custom/path" })?.endpoint).toBe("http://collector/custom/path");
    expect(
      tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://general", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://specific/traces" })?.endpoint,
    ).toBe("http://specific/traces");
  });

  test("the protocol, sampler, service name and batch bounds are read, the traces-specific protocol first", () => {
    const config = tracingConfig({
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "gateway-eu",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
      OTEL_BSP_MAX_QUEUE_SIZE: "100",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "512",
      OTEL_BSP_SCHEDULE_DELAY: "250",
    });
    expect(config).toMatchObject({
      protocol: "http/json",
      serviceName: "gateway-eu",
      resourceAttributes: "deployment.environment=prod",
      sampler: "parentbased_traceidratio",
      samplerRatio: 0.25,
      // A batch is never larger than the queue.
      batch: { scheduledDelayMillis: 250, maxQueueSize: 100, maxExportBatchSize: 100 },
    });
  });

  test("what cannot be honoured stops the start, naming the variable", () => {
    const on = { OTEL_TRACES_EXPORTER: "otlp" };
    expect(() => tracingConfig({ OTEL_TRACES_EXPORTER: "zipkin" })).toThrow("OTEL_TRACES_EXPORTER");
    expect(() => tracingConfig({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow("OTEL_EXPORTER_OTLP_PROTOCOL");
    expect(() => tracingConfig({ ...on, OTEL_TRACES_SAMPLER: "sometimes" })).toThrow("OTEL_TRACES_SAMPLER");
    expect(() => tracingConfig({ ...on, OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" })).toThrow("OTEL_TRACES_SAMPLER_ARG");
    expect(() => tracingConfig({ ...on, OTEL_BSP_MAX_QUEUE_SIZE: "0" })).toThrow("OTEL_BSP_MAX_QUEUE_SIZE");
    expect(() => tracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow("OTEL_EXPORTER_OTLP_ENDPOINT");
  });
});
