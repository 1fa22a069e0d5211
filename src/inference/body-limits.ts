import { irError, type ProtocolId } from "../ir";
import type { Config } from "../config";
import { ApiError, errorResponse } from "../errors/api-error";
import type { BodyLimit } from "../http/request-hooks";
import { errorInProtocol } from "../pipeline/inference-error";
import { requestIdFrom } from "../pipeline/request-id";
import { inferenceProtocolOf } from "./inference-paths";

/**
 * The body limit of every path, for the request hooks: an inference path has the inference
 * limit, and its client gets a body past it refused in its own protocol, like every other
 * inference error; every other route has the management limit and the management error.
 */
export function bodyLimits(config: Pick<Config, "maxInferenceBodyBytes" | "maxManagementBodyBytes">): (path: string) => BodyLimit {
  const inference = (protocol: ProtocolId): BodyLimit => ({
    bytes: config.maxInferenceBodyBytes,
    refuse: (request, description) => errorInProtocol(protocol, irError("payload_too_large", description), requestIdFrom(request.headers)),
  });
  const byProtocol: Record<ProtocolId, BodyLimit> = {
    "openai-chat": inference("openai-chat"),
    "openai-responses": inference("openai-responses"),
    "anthropic-messages": inference("anthropic-messages"),
    "google-generate-content": inference("google-generate-content"),
  };
  const management: BodyLimit = {
    bytes: config.maxManagementBodyBytes,
    refuse: (_request, description) => errorResponse(new ApiError("payload_too_large", description)),
  };
  return (path) => {
    const protocol = inferenceProtocolOf(path);
    return protocol ? byProtocol[protocol] : management;
  };
}
