import { irError, type IrError, type ProtocolId } from "../ir";
import { emptySignals, type PartGuard, type StreamOutput } from "../translation/translation-types";
import type { Translator } from "../translation/translator";
import { codecFor } from "../translation/codec-registry";
import { PassthroughFramer } from "./passthrough-framer";
import { asIrError } from "./inference-error";
import type { AttemptRecord } from "../routing/attempt-record";
import { readOnForUsage } from "./read-on-for-usage";
import { CommittedStream, type CommittedDeps, type CommittedInput, type StreamSeen } from "./committed-stream";
import { terminalFrameAt } from "./stream-terminal";

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
 * failure becomes the protocol's terminal error frame. A stream whose whole body arrived by
 * then (it ended before its first token, or its terminal frame came with it and the end
 * right behind) is settled first and answered as one body, with no relay.
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
  /** The whole stream is here: it is settled first, so its cost is in its last frame, which is held with the rest. */
  const settleWhole = async (out: string) => {
    const settled = observer.onEnd({ attemptOutcome: "success", status: "succeeded", interrupted: false });
    await settled.holdsEnded;
    held.push(costed(framer ? framer.flush() : out, settled.chargeMicroUsd));
  };
  let ended = false;
  /** The read after a chunk that held the upstream's terminal frame (see below). */
  let afterTerminal: Promise<string | undefined> | undefined;
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
        // The whole stream arrived before the first token.
        await settleWhole(output.out);
        break;
      }
      const output = note(handle.pushNow ? handle.pushNow(chunk) : await handle.push(chunk));
      if (seen.refusal) throw seen.refusal.error;
      if (output.signals.error && !seen.firstToken) throw output.signals.error;
      held.push(framer ? framer.take(chunk) : output.out);
      if (seen.firstToken || output.signals.finish) {
        // The upstream's terminal frame came with the first token (a short answer, a fast
        // provider): the body's end is most likely read already, and then the stream goes
        // out as one body, settled, with no relay behind it.
        if (seen.finish && !seen.error && terminalFrameAt(input.upstreamProtocol, chunk) !== -1) afterTerminal = reader.next();
        break;
      }
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

  let upstreamEnd: StreamOutput | undefined;
  if (afterTerminal !== undefined) {
    if ((await readIfOver(afterTerminal)) === END) {
      // The translation's end failing (an event left unfinished past its limit) fails the stream as the relay's end would.
      upstreamEnd = await handle.end().then(note, (error: unknown) => ({ out: "", signals: { ...emptySignals(), error: asIrError(error, irError("upstream_bad_gateway", "upstream stream failed")) } }));
      if (!upstreamEnd.signals.error && !seen.refusal) {
        await settleWhole(upstreamEnd.out);
        ended = true;
      }
    }
  }
  if (ended) {
    // The whole stream is here and settled: one body, no relay.
    reader.cancel();
    input.release();
    return { ok: true, response: new Response(held.join(""), { status: 200, headers: { ...SSE_HEADERS, ...input.headers } }) };
  }

  // Phase 2: committed. The client's reads drive the upstream reads (see CommittedStream).
  const committed = new CommittedStream(deps, input, {
    handle,
    framer,
    note,
    costed,
    held,
    // Its end came with an error or a refusal: the translation is over, and nothing is read on.
    ended: upstreamEnd !== undefined,
    seen,
    ...(upstreamEnd ? { upstreamEnd } : afterTerminal ? { pendingRead: afterTerminal } : {}),
  });
  const stream = new ReadableStream({
    type: "direct",
    pull: (controller) => committed.run(controller),
    cancel: () => committed.cancel(),
  });
  return { ok: true, response: new Response(stream, { status: 200, headers: { ...SSE_HEADERS, ...input.headers } }) };
}

const END = Symbol("end of body");

/**
 * Whether a read is over by the next turn of the event loop: END when the body ended,
 * otherwise undefined (more text came, the read failed, or it still waits), and the read
 * is the relay's to await. Waiting a turn, not the read itself: an upstream that keeps its
 * body open after the terminal frame must not hold the stream's first byte.
 */
async function readIfOver(read: Promise<string | undefined>): Promise<typeof END | undefined> {
  let over = false;
  read.then(
    (text) => {
      over = text === undefined;
    },
    () => {},
  );
  await new Promise<void>((resolve) => setImmediate(resolve));
  return over ? END : undefined;
}
