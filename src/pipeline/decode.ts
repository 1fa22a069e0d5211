import { IrDecodeError, irError, type IrError, type IrRequest, type IrWarning } from "../ir";
import type { Translator } from "../translation/translator";
import { BodyTooLargeError, readBodyTextOrBytesWithin } from "../http/request-body";
import type { InferenceInput } from "./request-context";
import { internalError } from "./inference-error";

export interface DecodeDeps {
  translator: Pick<Translator, "decodeRequest">;
  maxBodyBytes: number;
  /**
   * A body of more bytes than this is read as the chunks it came in and handed on so: the
   * worker pool takes them as they are (src/translation/README.md). The translator's inline
   * limit; Infinity when every body is translated on the request thread.
   */
  bytesAbove: number;
}

export type Decoded =
  | { ok: true; ir: IrRequest; warnings: IrWarning[] }
  /** `closeConnection`: the body was not read to its end, so the connection cannot carry another request. */
  | { ok: false; error: IrError; closeConnection: boolean };

/** Stage 2: the body, read within its limit and decoded from the client's protocol into the IR. */
export async function decode(deps: DecodeDeps, input: InferenceInput, requestId: string): Promise<Decoded> {
  try {
    const body = await readBodyTextOrBytesWithin(input.request, deps.maxBodyBytes, deps.bytesAbove);
    const decoded = await deps.translator.decodeRequest(input.protocol, body, input.injected);
    return { ok: true, ir: decoded.request, warnings: decoded.warnings };
  } catch (error) {
    if (error instanceof IrDecodeError) return { ok: false, error: irError("invalid_request", error.message), closeConnection: false };
    if (error instanceof BodyTooLargeError) return { ok: false, error: irError("payload_too_large", error.message), closeConnection: true };
    return { ok: false, error: internalError(error, requestId), closeConnection: false };
  }
}

