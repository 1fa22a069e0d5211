/**
 * Ids for function calls in a Gemini response, which has none. They must be stable (the
 * same bytes give the same ids) and, for Anthropic clients, unique across the whole
 * conversation — so they include the response id when Gemini sent one.
 */
export function responseCallId(responseId: string | undefined, callIndex: number): string {
  return responseScopedId("call", responseId, callIndex);
}

/** `<prefix>_<response id>_<index>`, or `<prefix>_<index>` without a response id (also the id of a grounding's web search). */
export function responseScopedId(prefix: string, responseId: string | undefined, index: number): string {
  if (responseId === undefined || responseId === "") return `${prefix}_${index}`;
  let safe = "";
  for (const char of responseId) {
    const code = char.charCodeAt(0);
    const isWordChar = (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || char === "_" || char === "-";
    safe += isWordChar ? char : "_"; // Anthropic tool_use ids allow [a-zA-Z0-9_-] only
  }
  return `${prefix}_${safe}_${index}`;
}
