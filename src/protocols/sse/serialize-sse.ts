/** `data: <json>\n\n`, the framing of OpenAI chat and Gemini streams. */
export function sseData(payload: unknown): string {
  return `data: ${typeof payload === "string" ? payload : JSON.stringify(payload)}\n\n`;
}

/** `event: <name>\ndata: <json>\n\n`, the framing of Anthropic and Responses streams. */
export function sseEvent(event: string, payload: unknown): string {
  return `event: ${event}\ndata: ${typeof payload === "string" ? payload : JSON.stringify(payload)}\n\n`;
}

/** A comment line: keeps idle connections open through proxies. */
export const SSE_KEEPALIVE = ": keepalive\n\n";
