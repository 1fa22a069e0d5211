/** One request through the client protocol's official SDK. */
import type { ClientName } from "../../policy-enforcement/enforcement-support";
import { callAnthropicMessages } from "./anthropic-messages-client";
import type { ClientRequest, ClientView } from "./client-view";
import { callGoogleGenerateContent } from "./google-generate-content-client";
import { callOpenaiChat } from "./openai-chat-client";
import { callOpenaiResponses } from "./openai-responses-client";

const CALLS: Readonly<Record<ClientName, (request: ClientRequest) => Promise<ClientView>>> = {
  "openai-chat": callOpenaiChat,
  "openai-responses": callOpenaiResponses,
  "anthropic-messages": callAnthropicMessages,
  "google-generate-content": callGoogleGenerateContent,
};

export function callClient(client: ClientName, request: ClientRequest): Promise<ClientView> {
  return CALLS[client](request);
}
