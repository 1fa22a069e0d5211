import { IrDecodeError, type IrRequest, type ProtocolId } from "../ir";
import { codecFor } from "./codec-registry";
import { textOfBytes, type BodyBytes } from "../http/request-body";
import { assertJsonDepth } from "../protocols/shared/json-depth";
import type { ClientBody, DecodedRequest, EncodedUpstreamRequest } from "./translation-types";

/**
 * Client body text -> IR. `injected` carries what the generate-content protocol puts
 * in the path rather than the body (model, stream), merged before decoding.
 */
export function decodeClientRequest(protocol: ProtocolId, clientBody: ClientBody, injected?: Record<string, unknown>): DecodedRequest {
  const text = bodyText(clientBody);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new IrDecodeError("request body is not valid JSON");
  }
  // Before any recursive code (codecs, schema rewriting, JSON.stringify, worker messages) sees it.
  assertJsonDepth(body, "request body");
  if (injected) {
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new IrDecodeError("request body must be a JSON object");
    body = { ...(body as Record<string, unknown>), ...injected };
  }
  const decoded = codecFor(protocol).decodeRequest(body);
  return { request: decoded.value, warnings: decoded.warnings };
}

/** IR -> the upstream's body text. */
export function encodeUpstreamRequest(protocol: ProtocolId, request: IrRequest, providerModelId: string, stream: boolean): EncodedUpstreamRequest & { body: string } {
  const encoded = codecFor(protocol).encodeRequest(request, { providerModelId, stream });
  return { body: JSON.stringify(encoded.value), warnings: encoded.warnings };
}

/** A whole body's text (a client's, or an upstream's answer); bytes are joined and decoded as `text()` would (invalid UTF-8 becomes U+FFFD). */
export function bodyText(body: string | BodyBytes): string {
  return typeof body === "string" ? body : textOfBytes(body);
}

/** The size that places a whole body's translation: its text's length, or its bytes. */
export function bodySize(body: string | BodyBytes): number {
  return typeof body === "string" ? body.length : body.byteLength;
}
