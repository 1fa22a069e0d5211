/**
 * Ids for function calls in a Gemini response, which has none. They must be stable (the
 * same bytes give the same ids) and, for Anthropic clients, unique across the whole
 * conversation — so they include the response id when Gemini sent one.
 */
export function responseCallId(responseId: string | undefined, callIndex: number): string {
  if (responseId === undefined || responseId === "") return `call_${callIndex}`;
  let safe = "";
  for (const char of responseId) {
    const code = char.charCodeAt(0);
    const isWordChar = (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || char === "_" || char === "-";
    safe += isWordChar ? char : "_"; // Anthropic tool_use ids allow [a-zA-Z0-9_-] only
  }
  return `call_${safe}_${callIndex}`;
}
