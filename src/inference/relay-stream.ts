import { irError, type CodecContext, type IrError, type ProtocolId } from "../ir";
import type { BodyReader } from "../routing/body-reader";
import type { StreamOutput, TranslationSignals } from "../translation/translation-types";
import type { RequestOutcome } from "../metering/request-outcome";
import type { Services } from "../services";
import type { AttemptRecord } from "../routing/attempt-record";
import { PassthroughFramer } from "./passthrough-framer";
import { asIrError } from "./inference-error";
import { withUsageCost } from "../metering/usage-cost";
import { CommittedStream, STREAM_BUFFER_BYTES } from "./committed-stream";

export interface RelayInput {
  attempt: AttemptRecord;
  clientProtocol: ProtocolId;
  passthrough: boolean;
  context: Omit<CodecContext, "newId">;
  clientAskedUsage: boolean;
  reader: BodyReader;
  abortUpstream: () => void;
  release: () => void;
  headers: Record<string, string>;
  onFinished: (outcome: AttemptRecord["outcome"], error?: IrError) => void;
  /**
   * Settles the request once the stream is over; returns the charge (null when unknown or
   * metering is off). `interrupted`: the client left or stalled before the end, so the
   * output produced so far is estimated.
   */
  settle: (status: RequestOutcome["status"], interrupted: boolean) => number | null;
}

export type RelayResult = { ok: true; response: Response } | { ok: false; error: IrError };

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" };

/**
 * Streams one upstream attempt to the client. Nothing is sent until the first
 * token (or a clean finish) arrives, so a stream that fails before it can still
 * fall through to the next candidate. After that the response is committed
 * (committed-stream.ts): upstream chunks are relayed as the client reads them, and
 * a later failure becomes the protocol's terminal error frame.
 *
 * Same protocol: the upstream bytes are forwarded (model id rewritten) and a copy goes
 * to the translation session for accounting. Other protocol: each chunk is translated
 * before it is written.
 */
export async function relayStream(services: Services, input: RelayInput): Promise<RelayResult> {
  const { attempt, reader, passthrough } = input;
  // Chat clients that asked for usage see the cost in their final usage chunk.
  const showCost = input.clientProtocol === "openai-chat" && input.clientAskedUsage;
  const costed = (text: string, charge: number | null) => (showCost ? withUsageCost(text, charge) : text);
  const handle = services.translator.openStream({
    sessionId: `${input.context.requestId}#${attempt.ordinal}`,
    upstream: attempt.candidate.protocol,
    client: input.clientProtocol,
    context: input.context,
    clientAskedUsage: input.clientAskedUsage,
    passthrough,
  });
  const framer = passthrough ? new PassthroughFramer(input.clientProtocol, input.context.model, input.clientAskedUsage) : undefined;
  const note = (output: StreamOutput) => {
    const signals = output.signals;
    const last = attempt.signals.at(-1);
    // Most chunks only add output characters: they fold into the previous entry, so a long
    // stream does not keep one entry per chunk until it is settled.
    if (last !== undefined && onlyOutputChars(signals)) last.outputChars += signals.outputChars;
    else attempt.signals.push(signals);
    if (output.signals.firstToken && attempt.firstTokenAt === undefined) attempt.firstTokenAt = performance.now();
    return output;
  };

  // Phase 1: hold everything until the first token or a clean finish.
  const held: string[] = [];
  let ended = false;
  try {
    for (;;) {
      const chunk = await reader.next();
      if (chunk === undefined) {
        const output = note(await handle.end());
        ended = true;
        if (output.signals.error || !attempt.signals.some((s) => s.finish)) {
          throw output.signals.error ?? irError("upstream_invalid_response", "upstream stream ended before any output");
        }
        // The whole stream arrived before the first token: settle now so the cost is in it.
        const charge = input.settle("succeeded", false);
        held.push(costed(framer ? framer.take("") + framer.flush() : output.out, charge));
        break;
      }
      const output = note(await handle.push(chunk));
      if (output.signals.error && attempt.firstTokenAt === undefined) throw output.signals.error;
      held.push(framer ? framer.take(chunk) : output.out);
      if (attempt.firstTokenAt !== undefined || output.signals.finish) break;
    }
  } catch (error) {
    const irErr = asIrError(error, irError("upstream_bad_gateway", "upstream stream failed"));
    input.abortUpstream();
    reader.cancel();
    if (!ended) await handle.fail(irErr).catch(() => undefined);
    input.release();
    input.onFinished(irErr.kind === "upstream_timeout" ? "timeout" : "provider_error", irErr);
    return { ok: false, error: irErr };
  }

  // Phase 2: committed. The client's reads drive the upstream reads (see CommittedStream).
  const committed = new CommittedStream(services, input, { handle, framer, note, costed, held, ended });
  const stream = new ReadableStream<Uint8Array>(
    {
      start: (controller) => committed.start(controller),
      pull: () => committed.pull(),
      cancel: () => committed.cancel(),
    },
    new ByteLengthQueuingStrategy({ highWaterMark: STREAM_BUFFER_BYTES }),
  );
  return { ok: true, response: new Response(stream, { status: 200, headers: { ...SSE_HEADERS, ...input.headers } }) };
}

function onlyOutputChars(signals: TranslationSignals): boolean {
  return signals.firstToken === undefined && signals.usageFrames.length === 0 && signals.finish === undefined && signals.error === undefined && signals.toolCalls === 0;
}
