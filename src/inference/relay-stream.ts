import { irError, type CodecContext, type IrError, type ProtocolId } from "../ir";
import type { BodyReader } from "../routing/body-reader";
import type { StreamHandle } from "../translation/translator";
import type { StreamOutput } from "../translation/translation-types";
import type { Services } from "../services";
import type { AttemptRecord } from "./handle-inference";
import { PassthroughFramer } from "./passthrough-framer";
import { streamErrorFrame } from "./stream-error-frame";
import { asIrError } from "./inference-error";
import { SSE_KEEPALIVE } from "../protocols/sse";
import { withUsageCost } from "../metering/usage-cost";

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
  /** Settles the request once the stream is over; returns the charge (null when unknown or metering is off). */
  settle: (clientGone: boolean, failed: boolean) => number | null;
}

export type RelayResult = { ok: true; response: Response } | { ok: false; error: IrError };


/** Idle time after which a committed stream gets an SSE comment (reference §2: `:keepalive`). */
const KEEPALIVE_MS = 15_000;

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" };
const encoder = new TextEncoder();

/**
 * Streams one upstream attempt to the client. Nothing is sent until the first
 * token (or a clean finish) arrives, so a stream that fails before it can still
 * fall through to the next candidate. After that the response is committed:
 * upstream chunks are relayed as they come, and a later failure becomes the
 * protocol's terminal error frame.
 *
 * Same protocol: the upstream bytes are forwarded (model id rewritten) and a tee'd
 * copy goes to the translation worker for accounting without being awaited.
 * Other protocol: each chunk is translated before it is written.
 */
export async function relayStream(services: Services, input: RelayInput): Promise<RelayResult> {
  const { attempt, reader, passthrough } = input;
  // Chat clients that asked for usage see the cost in their final usage chunk.
  const showCost = input.clientProtocol === "openai-chat" && input.clientAskedUsage;
  const costed = (text: string, charge: number | null) => (showCost ? withUsageCost(text, charge) : text);
  const handle: StreamHandle = services.translator.openStream({
    sessionId: `${input.context.requestId}#${attempt.ordinal}`,
    upstream: attempt.candidate.protocol,
    client: input.clientProtocol,
    context: input.context,
    clientAskedUsage: input.clientAskedUsage,
    passthrough,
  });
  const framer = passthrough ? new PassthroughFramer(input.clientProtocol, input.context.model, input.clientAskedUsage) : undefined;
  const note = (output: StreamOutput) => {
    attempt.signals.push(output.signals);
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
        const charge = input.settle(false, false);
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

  // Phase 2: committed.
  let clientGone = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let lastWrite = performance.now();
      const write = (text: string) => {
        if (!text || clientGone) return;
        controller.enqueue(encoder.encode(text));
        lastWrite = performance.now();
      };
      // An upstream that thinks for a long time must not let proxies close an idle connection.
      const keepalive = setInterval(() => {
        if (performance.now() - lastWrite >= KEEPALIVE_MS) write(SSE_KEEPALIVE);
      }, KEEPALIVE_MS / 3);
      for (const text of held) write(text);
      void pump(write).finally(() => {
        clearInterval(keepalive);
        if (!clientGone) controller.close();
      });
    },
    cancel() {
      clientGone = true;
      input.abortUpstream();
      reader.cancel();
    },
  });

  async function pump(write: (text: string) => void): Promise<void> {
    const tees: Promise<unknown>[] = [];
    try {
      if (!ended) {
        for (;;) {
          const chunk = await reader.next();
          if (chunk === undefined) break;
          if (framer) {
            write(framer.take(chunk));
            tees.push(handle.push(chunk).then(note));
          } else {
            write(note(await handle.push(chunk)).out);
          }
        }
        await Promise.all(tees);
        const output = note(await handle.end());
        ended = true;
        input.onFinished(clientGone ? "aborted" : output.signals.error ? "provider_error" : "success", output.signals.error);
        const charge = input.settle(clientGone, output.signals.error !== undefined);
        if (!framer) write(costed(output.out, charge));
        else {
          write(costed(framer.flush(), charge));
          if (output.signals.error) write(streamErrorFrame(input.clientProtocol, output.signals.error, input.context.requestId, input.context.model));
        }
      } else {
        input.onFinished("success");
      }
    } catch (error) {
      const irErr = asIrError(error, irError("upstream_bad_gateway", "upstream stream failed"));
      await Promise.allSettled(tees);
      // Always close the translation session, so no worker keeps its state.
      const output = ended ? undefined : await handle.fail(irErr).catch(() => undefined);
      if (clientGone) {
        input.onFinished("aborted", irErr);
        input.settle(true, false);
      } else {
        input.onFinished(irErr.kind === "upstream_timeout" ? "timeout" : "provider_error", irErr);
        input.settle(false, true);
        write(framer || !output ? streamErrorFrame(input.clientProtocol, irErr, input.context.requestId, input.context.model) : output.out);
      }
      reader.cancel();
    } finally {
      input.release();
    }
  }

  return { ok: true, response: new Response(stream, { status: 200, headers: { ...SSE_HEADERS, ...input.headers } }) };
}
