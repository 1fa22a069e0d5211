/**
 * A stand-in for an OpenTelemetry collector: a loopback HTTP server that accepts OTLP/HTTP
 * trace exports (`POST /v1/traces`, JSON or protobuf), keeps every body as received, and
 * reads the JSON ones into flat spans.
 */

export type AttributeValue = string | number | boolean | AttributeValue[];

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttributeValue>;
  events: string[];
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number;
  /** The exporting service's resource attributes. */
  resource: Record<string, AttributeValue>;
}

export interface ReceivedExport {
  path: string;
  contentType: string;
  bytes: Uint8Array;
}

export interface OtlpCollector {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  received: ReceivedExport[];
  /** Every span of every JSON export received so far. */
  spans(): CollectedSpan[];
  close(): Promise<void>;
}

interface OtlpAnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpAnyValue[] };
}

interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

function plain(value: OtlpAnyValue): AttributeValue {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return (value.arrayValue?.values ?? []).map(plain);
}

function attributes(list: OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, plain(entry.value)]));
}

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const received: ReceivedExport[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const bytes = new Uint8Array(await request.arrayBuffer());
      const contentType = request.headers.get("content-type") ?? "";
      received.push({ path: new URL(request.url).pathname, contentType, bytes });
      // An ExportTraceServiceResponse with nothing rejected, in the request's encoding.
      return contentType.includes("json") ? Response.json({}) : new Response(new Uint8Array(0), { headers: { "content-type": "application/x-protobuf" } });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    received,
    spans() {
      const spans: CollectedSpan[] = [];
      for (const body of received) {
        if (!body.contentType.includes("json")) continue;
        const parsed = JSON.parse(new TextDecoder().decode(body.bytes)) as { resourceSpans: any[] };
        for (const resourceSpans of parsed.resourceSpans) {
          const resource = attributes(resourceSpans.resource?.attributes);
          for (const scopeSpans of resourceSpans.scopeSpans) {
            for (const span of scopeSpans.spans) {
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? "",
                name: span.name,
                kind: span.kind,
                startNs: BigInt(span.startTimeUnixNano),
                endNs: BigInt(span.endTimeUnixNano),
                attributes: attributes(span.attributes),
                events: (span.events ?? []).map((event: { name: string }) => event.name),
                status: span.status?.code ?? 0,
                resource,
              });
            }
          }
        }
      }
      return spans;
    },
    close: () => server.stop(true),
  };
}
