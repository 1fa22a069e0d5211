import type { IrError } from "./ir-error";
import type { IrRequest } from "./ir-request";
import type { IrResponse } from "./ir-response";
import type { IrStreamPart } from "./ir-stream";
import type { IrWarning } from "./ir-warning";
import type { ProtocolId } from "./protocol-id";
import type { SseEvent } from "./sse-event";

/**
 * Everything a codec needs from the outside world. Codecs are pure: no I/O, no
 * clock, no random ids — those come in here, so a codec runs the same in a worker
 * and in a unit test.
 */
export interface CodecContext {
  /** Switchyard's request id; used as the response id where the protocol has one. */
  requestId: string;
  /** The model id to echo to the client (the first requested model). */
  model: string;
  /** Unix seconds. */
  created: number;
  /** Deterministic id source for synthesised ids (tool calls, items): prefix -> unique id. */
  newId: (prefix: string) => string;
}

export interface EncodeRequestContext {
  /** The upstream's own model id (catalog `provider_model_id`). */
  providerModelId: string;
  stream: boolean;
}

/**
 * What a request or response codec produced, with what it could not carry. Every encoder
 * reports through the same channel, a list of `IrWarning`s it appends to: request and
 * response encoders return theirs with the value; a stream encoder keeps its own list
 * (`StreamEncoder.warnings`), because a stream can drop something on any frame.
 */
export interface Encoded<T> {
  value: T;
  warnings: IrWarning[];
}

/** Decodes one protocol's SSE events into IR stream parts. Stateful, one per stream. */
export interface StreamDecoder {
  push(event: SseEvent): IrStreamPart[];
  /** The upstream closed; emits whatever was buffered (and an error part if the stream was cut short). */
  end(): IrStreamPart[];
  /**
   * What the stream carried that the IR has no place for, appended to as it is skipped,
   * as `StreamEncoder.warnings` is. Absent on a decoder that reads everything it keeps.
   */
  readonly warnings?: readonly IrWarning[];
  /**
   * Set once the upstream asked the client to take an action the IR cannot carry (a
   * Responses hosted tool call such as `local_shell_call`): only a same-protocol relay can
   * deliver it, and a translation refuses the answer rather than end it as an empty success.
   */
  readonly clientAction?: string;
}

/** Encodes IR stream parts into one protocol's SSE text. Stateful, one per stream. */
export interface StreamEncoder {
  push(part: IrStreamPart): string;
  /** Terminates the stream (e.g. `data: [DONE]`), closing any open block. */
  end(): string;
  /**
   * What the stream could not carry so far, appended to as it happens (by `push` or `end`).
   * The caller reads the entries added by each call; a stream that drops nothing never adds one.
   */
  readonly warnings: readonly IrWarning[];
}

/** Where a codec's charge goes into a finished body: at UTF-16 index `at`, its fields followed by `separator`. */
export interface ChargeSplice {
  at: number;
  separator: string;
}

export interface ProtocolCodec {
  id: ProtocolId;
  /** Client body -> IR. Throws IrDecodeError for a malformed body. */
  decodeRequest(body: unknown): Encoded<IrRequest>;
  /** IR -> upstream body. */
  encodeRequest(request: IrRequest, context: EncodeRequestContext): Encoded<Record<string, unknown>>;
  /** Upstream non-stream body -> IR. Throws IrDecodeError when it is not this protocol's shape. */
  decodeResponse(body: unknown): IrResponse;
  /** IR -> client non-stream body, with what the client's protocol could not carry. */
  encodeResponse(response: IrResponse, context: CodecContext): Encoded<Record<string, unknown>>;
  createStreamDecoder(): StreamDecoder;
  createStreamEncoder(context: CodecContext, options: { includeUsage: boolean }): StreamEncoder;
  /** Renders an error for the client: status, JSON body and extra headers. */
  encodeError(error: IrError): { status: number; body: Record<string, unknown>; headers: Record<string, string> };
  /** Maps an upstream HTTP error (status + parsed body or text) into a kind of the error table. */
  decodeUpstreamError(status: number, body: unknown, headers?: Record<string, string>): IrError;
  /**
   * Shows the request's charge to the client where this protocol has a place for it: in a
   * finished JSON body, or in the stream text that carries the final usage frame (sent to
   * a client that asked for usage). Returns the text with the charge added, every other
   * byte as it was; `null` (unknown charge) leaves it unchanged. Absent: the protocol
   * shows no charge.
   */
  addCharge?(text: string, chargeMicroUsd: number | null): string;
  /**
   * With `addCharge`, its two halves, for a finished body that is not a string here (a
   * large answer a worker turned into bytes): where in `body` addCharge writes the charge
   * (undefined: nowhere), and the fields it writes there. addCharge(body, charge) is
   * body[0, at) + chargeFields(charge) + separator + body[at, end).
   */
  chargeSplice?(body: string): ChargeSplice | undefined;
  chargeFields?(chargeMicroUsd: number): string;
  /**
   * With `addCharge`: where, in whole SSE frames of this protocol, the first frame that
   * `addCharge` would write the charge into begins (-1: none). A same-protocol relay holds
   * the stream from there until the charge is known.
   */
  usageFrameAt?(frames: string): number;
  /**
   * A same-protocol relay to a client that did not ask for usage: removes from whole SSE
   * frames the usage this codec's encodeRequest asked the upstream for on the client's
   * behalf, every other byte as it was. Absent: the frames are relayed as they are.
   */
  dropUnrequestedUsage?(frames: string): string;
}
