import { IrDecodeError, irError, type IrError, type IrRequest, type IrWarning } from "../ir";
import type { Translator } from "../translation/translator";
import { BodyTooLargeError, readBodyBytesWithin, readBodyWithin } from "../http/request-body";
import { clientBodyText } from "../translation/translate-request";
import type { ClientBody } from "../translation/translation-types";
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
    const body = await readClientBody(input.request, deps.maxBodyBytes, deps.bytesAbove);
    const decoded = await deps.translator.decodeRequest(input.protocol, body, input.injected);
    return { ok: true, ir: decoded.request, warnings: decoded.warnings };
  } catch (error) {
    if (error instanceof IrDecodeError) return { ok: false, error: irError("invalid_request", error.message), closeConnection: false };
    if (error instanceof BodyTooLargeError) return { ok: false, error: irError("payload_too_large", error.message), closeConnection: true };
    return { ok: false, error: internalError(error, requestId), closeConnection: false };
  }
}

/**
 * A declared small body as text (Bun's native read); a large or chunked one as bytes, decoded
 * here only if it turned out small. Not async itself: the small body's read is every
 * request's, and is handed on without another promise around it.
 */
function readClientBody(request: Request, limit: number, bytesAbove: number): Promise<ClientBody> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) <= bytesAbove) return readBodyWithin(request, limit);
  return readLargeOrChunkedBody(request, limit, bytesAbove);
}

async function readLargeOrChunkedBody(request: Request, limit: number, bytesAbove: number): Promise<ClientBody> {
  const bytes = await readBodyBytesWithin(request, limit);
  return bytes.byteLength > bytesAbove ? bytes : clientBodyText(bytes);
}
