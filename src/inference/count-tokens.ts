import { IrDecodeError, irError } from "../ir";
import { promptChars, tokensFromChars } from "../metering/estimate-tokens";
import type { InferenceDeps } from "../pipeline/run-inference";
import { errorInProtocol } from "../pipeline/inference-error";
import { authenticate } from "../pipeline/authenticate";
import { requestIdFrom } from "../pipeline/request-id";
import { BodyTooLargeError, closingConnection, readBodyWithin } from "../http/request-body";

/**
 * `POST /v1/messages/count_tokens` (Anthropic), which Claude Code calls to manage its
 * context window. Switchyard routes to many tokenizers, so the count is the same
 * 4-characters-per-token estimate metering uses, plus what tool definitions add;
 * the response says so in a header.
 */
export async function countTokens(deps: Pick<InferenceDeps, "auth" | "decode">, request: Request): Promise<Response> {
  const requestId = requestIdFrom(request.headers);
  const fail = (error: Parameters<typeof errorInProtocol>[1]) => errorInProtocol("anthropic-messages", error, requestId);
  const authorized = await authenticate(deps.auth, request.headers, requestId);
  if (!authorized.ok) return fail(authorized.error);
  try {
    const body = await readBodyWithin(request, deps.decode.maxBodyBytes);
    // count_tokens bodies carry no max_tokens; the Messages decoder does not need one either.
    const decoded = await deps.decode.translator.decodeRequest("anthropic-messages", body);
    const ir = decoded.request;
    const toolChars = (ir.tools ?? []).reduce((sum, t) => sum + t.name.length + (t.description?.length ?? 0) + JSON.stringify(t.parameters).length, 0);
    return new Response(JSON.stringify({ input_tokens: tokensFromChars(promptChars(ir) + toolChars) }), {
      status: 200,
      headers: { "content-type": "application/json", "x-request-id": requestId, "x-switchyard-token-count": "estimated; 4 characters per token" },
    });
  } catch (error) {
    if (error instanceof IrDecodeError) return fail(irError("invalid_request", error.message));
    if (error instanceof BodyTooLargeError) return closingConnection(fail(irError("payload_too_large", error.message)));
    return fail(irError("internal", "internal error"));
  }
}
