/** Vendor-shaped identifiers: the prefixes are what clients and decoders may look at. */

const ALPHANUMERIC = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX = "0123456789abcdef";

function randomFrom(alphabet: string, length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = "";
  for (const byte of bytes) out += alphabet[byte % alphabet.length];
  return out;
}

export const mockIds = {
  /** OpenAI chat completion: "chatcmpl-" + 29 characters. */
  chatCompletion: () => `chatcmpl-${randomFrom(ALPHANUMERIC, 29)}`,
  /** OpenAI tool call, chat and Responses `call_id`. */
  openaiToolCall: () => `call_${randomFrom(ALPHANUMERIC, 24)}`,
  systemFingerprint: () => `fp_${randomFrom(HEX, 10)}`,
  /** Responses ids: response, message item, function_call item, reasoning item. */
  response: () => `resp_${randomFrom(HEX, 48)}`,
  responseMessage: () => `msg_${randomFrom(HEX, 48)}`,
  responseFunctionCall: () => `fc_${randomFrom(HEX, 48)}`,
  responseReasoning: () => `rs_${randomFrom(HEX, 48)}`,
  /** Anthropic message and tool_use ids. */
  anthropicMessage: () => `msg_01${randomFrom(ALPHANUMERIC, 22)}`,
  anthropicToolUse: () => `toolu_01${randomFrom(ALPHANUMERIC, 22)}`,
  anthropicSignature: () => `${randomFrom(ALPHANUMERIC, 86)}==`,
  /** Google `responseId`. */
  googleResponse: () => randomFrom(ALPHANUMERIC, 22),
  /** `x-request-id` (OpenAI) / `request-id` (Anthropic). */
  requestId: () => `req_${randomFrom(HEX, 32)}`,
};
