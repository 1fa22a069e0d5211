import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type HrTime, type TextMapGetter, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator, millisToHrTime } from "@opentelemetry/core";
import type { ProtocolId } from "../ir";
import type { RequestTrace, TraceStage, TracedAttempt, TracedError, TracedOutcome, TracedSettlement } from "./request-trace";

/**
 * `gen_ai.operation.name` by protocol (OpenTelemetry GenAI semantic conventions,
 * gen-ai-spans.md: "chat" for chat completion APIs, "generate_content" for Gemini's
 * multimodal generateContent).
 */
const OPERATION: Readonly<Record<ProtocolId, string>> = {
  "openai-chat": "chat",
  "openai-responses": "chat",
  "anthropic-messages": "chat",
  "google-generate-content": "generate_content",
};

/** The client's `traceparent`/`tracestate` (W3C Trace Context): our spans join its trace. */
const PROPAGATOR = new W3CTraceContextPropagator();
const HEADERS: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
};

/** Attributes without the unknown ones: the SDK would warn about each undefined value. */
function known(entries: Record<string, string | number | boolean | string[] | undefined>): Attributes {
  const attributes: Attributes = {};
  for (const key in entries) if (entries[key] !== undefined) attributes[key] = entries[key];
  return attributes;
}

/**
 * One request's spans, made when it ends from the times the pipeline noted: a SERVER span
 * for the request (its parent the client's traceparent, when sent), an INTERNAL child per
 * stage (each from the end of the one before; a refused request's last is the stage that
 * refused it), a `relay` child for a served stream from its head to its end (none for a
 * stream that arrived whole, answered as one body once settled), and a CLIENT
 * child per upstream attempt. Attributes follow the GenAI semantic conventions (gen_ai.*),
 * HTTP's (http.*, url.path, server.*) and ours (switchyard.*); none carries a prompt, an
 * answer, an error's message, a key or a query string.
 */
export class SpanningTrace implements RequestTrace {
  private readonly stages: { name: TraceStage; endedAt: number }[] = [];
  private error: TracedError | undefined;
  private ended = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly request: Request,
    private readonly protocol: ProtocolId,
    private readonly requestId: string,
    private readonly startedAt: number,
  ) {}

  stage(name: TraceStage): void {
    this.stages.push({ name, endedAt: performance.now() });
  }

  failed(error: TracedError): void {
    this.error = error;
  }

  end(outcome?: TracedOutcome, settlement?: TracedSettlement): void {
    if (this.ended) return;
    this.ended = true;
    const endedAt = performance.now();
    // Settled while its attempt stage ran (a stream that arrived whole, answered as one body
    // once settled; a fault of ours mid-attempt): that stage ends with the request, and
    // nothing was relayed after it.
    const settledInAttempt = (outcome?.attempts.length ?? 0) > 0 && this.stages.at(-1)?.name === "admit";
    if (settledInAttempt) this.stages.push({ name: "attempt", endedAt });
    // One wall-clock anchor for every time of the trace, so its spans nest exactly (the SDK
    // would anchor each span on its own, to the millisecond).
    const anchor = Date.now() - endedAt;
    const at = (time: number): HrTime => millisToHrTime(anchor + time);
    const operation = OPERATION[this.protocol];
    const model = outcome?.requestedModel;
    const failed = outcome === undefined || outcome.status === "failed";
    const errorType = failed ? this.errorType(outcome) : undefined;
    const parent = PROPAGATOR.extract(ROOT_CONTEXT, this.request.headers, HEADERS);
    const root = this.tracer.startSpan(
      model === undefined ? operation : `${operation} ${model}`,
      { kind: SpanKind.SERVER, startTime: at(this.startedAt), attributes: this.requestAttributes(operation, outcome, settlement, errorType) },
      parent,
    );
    if (errorType !== undefined) root.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
    if (root.isRecording()) {
      const context = trace.setSpan(parent, root);
      let from = this.startedAt;
      for (const stage of this.stages) {
        this.tracer.startSpan(stage.name, { kind: SpanKind.INTERNAL, startTime: at(from) }, context).end(at(stage.endedAt));
        from = stage.endedAt;
      }
      if (outcome?.streamed && outcome.serving !== undefined && !settledInAttempt && this.stages.at(-1)?.name === "attempt") {
        this.tracer.startSpan("relay", { kind: SpanKind.INTERNAL, startTime: at(from) }, context).end(at(endedAt));
      }
      for (const attempt of outcome?.attempts ?? []) this.attemptSpan(context, attempt, at, endedAt);
    }
    root.end(at(endedAt));
  }

  /** What the request failed with: the error its client got, else its serving or last attempt's, else its status. */
  private errorType(outcome: TracedOutcome | undefined): string {
    const attemptError = outcome?.serving?.error ?? outcome?.attempts.at(-1)?.error;
    return this.error?.kind ?? attemptError?.kind ?? String(outcome?.statusCode ?? "internal");
  }

  private requestAttributes(operation: string, outcome: TracedOutcome | undefined, settlement: TracedSettlement | undefined, errorType: string | undefined): Attributes {
    const serving = outcome?.serving;
    let finish: string | undefined;
    for (const signals of serving?.signals ?? []) if (signals.finish) finish = signals.finish.reason;
    return known({
      "gen_ai.operation.name": operation,
      "gen_ai.request.model": outcome?.requestedModel,
      "gen_ai.response.model": serving?.candidate.modelId,
      "gen_ai.provider.name": serving?.candidate.providerId,
      // The attribute gen_ai.provider.name replaced; backends that predate it still read this one.
      "gen_ai.system": serving?.candidate.providerId,
      "gen_ai.usage.input_tokens": settlement?.usage.promptTokens,
      "gen_ai.usage.output_tokens": settlement?.usage.completionTokens,
      "gen_ai.response.finish_reasons": finish === undefined ? undefined : [finish],
      "switchyard.cost_micro_usd": settlement?.chargeMicroUsd ?? undefined,
      "switchyard.request_id": this.requestId,
      "switchyard.client_protocol": this.protocol,
      "switchyard.streamed": outcome?.streamed,
      "switchyard.status": outcome?.status ?? "failed",
      "switchyard.attempts": outcome?.attempts.length,
      "http.request.method": this.request.method,
      "url.path": new URL(this.request.url).pathname,
      "http.response.status_code": outcome?.statusCode ?? this.error?.status,
      "error.type": errorType,
    });
  }

  /** A CLIENT span for one upstream attempt, from its start to its end (a stream's: when it ended). */
  private attemptSpan(context: Context, attempt: TracedAttempt, at: (time: number) => HrTime, endedAt: number): void {
    const candidate = attempt.candidate;
    const operation = OPERATION[candidate.protocol];
    const failed = attempt.outcome !== "success";
    const errorType = failed ? (attempt.error?.kind ?? attempt.outcome) : undefined;
    // A customer's own base URL (BYOK api_base) is theirs: the span names only the provider.
    const origin = candidate.customerSuppliedBase ? undefined : new URL(candidate.baseUrl);
    const span = this.tracer.startSpan(
      `${operation} ${candidate.providerModelId}`,
      {
        kind: SpanKind.CLIENT,
        startTime: at(attempt.startedAt),
        attributes: known({
          "gen_ai.operation.name": operation,
          "gen_ai.provider.name": candidate.providerId,
          "gen_ai.system": candidate.providerId,
          "gen_ai.request.model": candidate.providerModelId,
          "switchyard.endpoint": `${candidate.providerId}/${candidate.providerModelId}`,
          "switchyard.model_id": candidate.modelId,
          "switchyard.upstream_protocol": candidate.protocol,
          "switchyard.funding": candidate.funding,
          "switchyard.attempt": attempt.ordinal,
          "switchyard.attempt_outcome": attempt.outcome,
          "server.address": origin?.hostname,
          "server.port": origin === undefined ? undefined : Number(origin.port || (origin.protocol === "https:" ? 443 : 80)),
          "http.response.status_code": attempt.status,
          "error.type": errorType,
        }),
      },
      context,
    );
    if (attempt.firstTokenAt !== undefined) span.addEvent("first_token", at(attempt.firstTokenAt));
    if (errorType !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
    span.end(at(attempt.endedAt ?? endedAt));
  }
}
