import type { IrRequest, IrWarning, ProtocolId } from "../../ir";
import { unsupported } from "./extras";

/**
 * Anthropic `cache_control` markers have no OpenAI form: OpenAI caches prompt prefixes
 * automatically (platform.openai.com/docs/guides/prompt-caching). One warning per request.
 */
export function cacheControlWarning(request: IrRequest, target: ProtocolId): IrWarning | undefined {
  const marked =
    request.systemCacheControl !== undefined ||
    request.messages.some((message) => message.content.some((part) => part.type === "text" && part.cacheControl !== undefined));
  return marked ? unsupported("cache_control", target, "is Anthropic-only (OpenAI caches prompts automatically)") : undefined;
}
