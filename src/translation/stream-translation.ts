import type { IrStreamPart, IrWarning, StreamDecoder, StreamEncoder } from "../ir";
import { clientActionRefusal, clientActionWarning } from "./client-action";
import { SseParser } from "../protocols/sse";
import { codecFor } from "./codec-registry";
import { opaqueUpstreamError } from "../egress/opaque-upstream-error";
import { withIdSource } from "./deterministic-ids";
import { emptySignals, type GuardedOutput, type PartGuard, type StreamOpenOptions, type StreamOutput, type TranslationSignals } from "./translation-types";
import { utf8Bytes } from "./utf8-bytes";

/**
 * One upstream stream on its way to one client: upstream SSE text in, client SSE
 * text out (nothing out for a passthrough), plus the signals routing and metering
 * need. Stateful; lives in one worker for the whole stream. With a `guard` (a response-side
 * check, inline only), each decoded part goes through it before encoding: the signals
 * count what the upstream sent, the client gets what the guard lets through. The encoder's
 * warnings ride out with the output of the call that raised them.
 */
export class StreamTranslation {
  private readonly parser = new SseParser();
  private readonly decoder: StreamDecoder;
  private readonly encoder: StreamEncoder | undefined;
  private sawFirstToken = false;
  /** How many of the encoder's warnings went out with an earlier output. */
  private warningsReported = 0;
  /** The same for the decoder's (what the IR has no place for); a passthrough drops nothing, so it reports none. */
  private decoderWarningsReported = 0;
  private clientActionRefused = false;
  /** Warnings the translation itself raises (a refused client action), reported with the next output. */
  private readonly extraWarnings: IrWarning[] = [];

  constructor(
    private readonly options: StreamOpenOptions,
    private readonly guard?: PartGuard,
  ) {
    this.decoder = codecFor(options.upstream).createStreamDecoder();
    this.encoder = options.passthrough
      ? undefined
      : codecFor(options.client).createStreamEncoder(withIdSource(options.context), { includeUsage: options.clientAskedUsage });
  }

  push(text: string): StreamOutput {
    const signals = emptySignals();
    let out = "";
    for (const event of this.parser.push(text)) out += this.handleParts(this.decoder.push(event), signals);
    this.refuseClientAction(signals);
    return this.output(out, signals);
  }

  /**
   * A translated stream whose upstream asked the client to take an action the client's
   * protocol cannot express (StreamDecoder.clientAction) is refused once, like a
   * response-side check's refusal: the relay ends it with the protocol's error. A
   * passthrough relays the upstream's item as it is.
   */
  private refuseClientAction(signals: TranslationSignals): void {
    const action = this.decoder.clientAction;
    if (action === undefined || this.encoder === undefined || this.clientActionRefused) return;
    this.clientActionRefused = true;
    signals.refused ??= clientActionRefusal(action, this.options.client);
    signals.refusedAction = true;
    this.extraWarnings.push(clientActionWarning(action));
  }

  /** The upstream closed. Flushes the decoder (an early end becomes an error part) and closes the client stream. */
  end(): StreamOutput {
    const signals = emptySignals();
    let out = "";
    for (const event of this.parser.end()) out += this.handleParts(this.decoder.push(event), signals);
    out += this.handleParts(this.decoder.end(), signals);
    this.refuseClientAction(signals);
    if (this.guard) out += this.encodeGuarded(this.guard.flush(), signals);
    if (this.encoder) out += this.encoder.end();
    return this.output(out, signals);
  }

  /** Ends the client stream with an error frame in its protocol (upstream failed or timed out mid-stream). */
  fail(error: NonNullable<TranslationSignals["error"]>): StreamOutput {
    const signals = emptySignals();
    signals.error = error;
    if (!this.encoder) return { out: "", signals };
    return this.output(this.encoder.push({ type: "error", error }) + this.encoder.end(), signals);
  }

  /** One call's output, with the warnings the decoder and the encoder raised during it (none: no field). */
  private output(out: string, signals: TranslationSignals): StreamOutput {
    const encoded = this.encoder?.warnings;
    if (encoded === undefined) return { out, signals };
    const decoded = this.decoder.warnings;
    const newDecoded = decoded !== undefined && decoded.length > this.decoderWarningsReported;
    if (!newDecoded && encoded.length === this.warningsReported && this.extraWarnings.length === 0) return { out, signals };
    const raised = [...this.extraWarnings.splice(0), ...(newDecoded ? decoded.slice(this.decoderWarningsReported) : []), ...encoded.slice(this.warningsReported)];
    this.decoderWarningsReported = decoded?.length ?? 0;
    this.warningsReported = encoded.length;
    return { out, signals, warnings: raised };
  }

  private handleParts(parts: IrStreamPart[], signals: TranslationSignals): string {
    let out = "";
    for (const decoded of parts) {
      const part = decoded.type === "error" && this.options.opaqueErrors ? { type: "error" as const, error: opaqueUpstreamError(decoded.error) } : decoded;
      switch (part.type) {
        case "text_delta":
          if (part.text.length > 0) this.noteFirstToken("text", signals);
          signals.outputBytes += utf8Bytes(part.text);
          break;
        case "reasoning_delta":
          if (part.text.length > 0) this.noteFirstToken("reasoning", signals);
          signals.outputBytes += utf8Bytes(part.text);
          break;
        case "tool_call_start":
          this.noteFirstToken("tool", signals);
          signals.toolCalls++;
          signals.outputBytes += utf8Bytes(part.name);
          break;
        case "tool_call_delta":
          signals.outputBytes += utf8Bytes(part.argumentsDelta);
          break;
        case "usage":
          signals.usageFrames.push(part.usage);
          break;
        case "finish":
          signals.finish = part.finish;
          break;
        case "error":
          signals.error = part.error;
          break;
        default:
          break;
      }
      if (this.guard) out += this.encodeGuarded(this.guard.onPart(part), signals);
      else if (this.encoder) out += this.encoder.push(part);
    }
    return out;
  }

  /** What the guard let through, encoded; its refusal is reported once (it sends nothing after one). */
  private encodeGuarded(guarded: GuardedOutput, signals: TranslationSignals): string {
    let out = "";
    if (this.encoder) for (const part of guarded.parts) out += this.encoder.push(part);
    if (guarded.refused) signals.refused ??= guarded.refused;
    return out;
  }

  private noteFirstToken(kind: "text" | "reasoning" | "tool", signals: TranslationSignals): void {
    if (this.sawFirstToken) return;
    this.sawFirstToken = true;
    signals.firstToken = kind;
  }
}
