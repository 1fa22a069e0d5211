import { irError, type IrError, type ProtocolId } from "../ir";
import type { PartGuard, StreamOutput } from "../translation/translation-types";
import type { Translator } from "../translation/translator";
import { codecFor } from "../translation/codec-registry";
import { PassthroughFramer } from "./passthrough-framer";
import { asIrError } from "./inference-error";
import type { AttemptRecord } from "../routing/attempt-record";
import { readOnForUsage } from "./read-on-for-usage";
import { CommittedStream, type CommittedDeps, type CommittedInput, type StreamSeen } from "./committed-stream";

export interface RelayDeps extends CommittedDeps {
  translator: Pick<Translator, "openStream">;
}

export interface RelayInput extends CommittedInput {
  /** The translation session's id: `${requestId}#${attempt ordinal}`. */
  sessionId: string;
  upstreamProtocol: ProtocolId;
  passthrough: boolean;
  /** The upstream's error events reach the client only as the gateway's description (a customer-supplied base; never with passthrough). */
  opaqueErrors?: boolean;
  /** The response-side check of a stream whose answer is checked (never with passthrough). */
  guard?: PartGuard;
  clientAskedUsage: boolean;
  headers: Record<string, string>;
  /** The attempt: reading the upstream until the first token is time spent waiting for it (Server-Timing). */
  waits: Pick<AttemptRecord, "upstreamMs">;
}

export type RelayResult =
  | { ok: true; response: Response }
  /**
   * Nothing was sent. `refused`: a response-side check refused the answer, so no other
   * candidate is tried; `readToEnd`: the upstream's stream was read to its end first, so its
   * usage report is final.
   */
  | { ok: false; error: IrError; attemptOutcome: "timeout" | "provider_error" | "success"; refused: boolean; readToEnd?: boolean };

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" };

/**
 * Stage 7 for streams: relays one upstream attempt to the client. Nothing is sent until
 * the first token (or a clean finish) arrives, so a stream that fails before it can still
 * fall through to the next candidate. After that the response is committed
 * (committed-stream.ts): upstream chunks are relayed as the client reads them, and a later
 * failure becomes the protocol's terminal error frame.
 *
 * Same protocol: the upstream bytes are forwarded (model id rewritten) and a copy goes
 * to the translation session for accounting. Other protocol: each chunk is translated
 * before it is written. Every output goes to the observer, which accounts for it and may
 * refuse it; the observer is told once how the stream ended.
 */
export async function relayStream(deps: RelayDeps, input: RelayInput): Promise<RelayResult> {
  const { reader, passthrough, observer } = input;
  // Clients that asked for usage see the cost in their final usage frame, where their protocol has a place for it.
  const addCharge = input.clientAskedUsage ? codecFor(input.clientProtocol).addCharge : undefined;
  const costed = (text: string, charge: number | null) => (addCharge ? addCharge(text, charge) : text);
  const handle = deps.translator.openStream({
    sessionId: input.sessionId,
    upstream: input.upstreamProtocol,
    client: input.clientProtocol,
    context: input.context,
    clientAskedUsage: input.clientAskedUsage,
    passthrough,
    ...(input.opaqueErrors ? { opaqueErrors: true } : {}),
  }, input.guard);
  const framer = passthrough ? new PassthroughFramer(input.clientProtocol, input.context.model, input.clientAskedUsage) : undefined;
  const seen: StreamSeen = { firstToken: false, finish: false };
  const note = (output: StreamOutput) => {
    const signals = output.signals;
    if (signals.firstToken) seen.firstToken = true;
    if (signals.finish) seen.finish = true;
    if (signals.error) seen.error ??= signals.error;
    if (signals.refused) seen.refusal ??= signals.refusedAction ? { error: signals.refused, readOn: true } : { error: signals.refused };
    const refusal = observer.onParts(output);
    if (refusal) seen.refusal ??= refusal;
    return output;
  };

  // Phase 1: hold everything until the first token or a clean finish.
  const held: string[] = [];
  let ended = false;
  try {
    for (;;) {
      const readFrom = performance.now();
      let chunk: string | undefined;
      try {
        chunk = await reader.next();
      } finally {
        input.waits.upstreamMs = (input.waits.upstreamMs ?? 0) + (performance.now() - readFrom);
      }
      if (chunk === undefined) {
        const output = note(await handle.end());
        ended = true;
        if (output.signals.error || !seen.finish) {
          throw output.signals.error ?? irError("upstream_invalid_response", "upstream stream ended before any output");
        }
        if (seen.refusal) throw seen.refusal.error;
        // The whole stream arrived before the first token: settle now so the cost is in it.
        const settled = observer.onEnd({ attemptOutcome: "success", status: "succeeded", interrupted: false });
        await settled.holdsEnded;
        held.push(costed(framer ? framer.take("") + framer.flush() : output.out, settled.chargeMicroUsd));
        break;
      }
      const output = note(handle.pushNow ? handle.pushNow(chunk) : await handle.push(chunk));
      if (seen.refusal) throw seen.refusal.error;
      if (output.signals.error && !seen.firstToken) throw output.signals.error;
      held.push(framer ? framer.take(chunk) : output.out);
      if (seen.firstToken || output.signals.finish) break;
    }
  } catch (error) {
    const irErr = asIrError(error, irError("upstream_bad_gateway", "upstream stream failed"));
    if (!ended && seen.refusal?.readOn) ended = await readOnForUsage(reader, handle, note, deps.readOnMs);
    input.abortUpstream();
    reader.cancel();
    if (!ended) await handle.fail(irErr).catch(() => undefined);
    input.release();
    if (seen.refusal) return { ok: false, error: seen.refusal.error, attemptOutcome: "success", refused: true, readToEnd: ended };
    return { ok: false, error: irErr, attemptOutcome: irErr.kind === "upstream_timeout" ? "timeout" : "provider_error", refused: false };
  }

  // Phase 2: committed. The client's reads drive the upstream reads (see CommittedStream).
  const committed = new CommittedStream(deps, input, { handle, framer, note, costed, held, ended, seen });
  const stream = new ReadableStream({
    type: "direct",
    pull: (controller) => committed.run(controller),
    cancel: () => committed.cancel(),
  });
  return { ok: true, response: new Response(stream, { status: 200, headers: { ...SSE_HEADERS, ...input.headers } }) };
}
