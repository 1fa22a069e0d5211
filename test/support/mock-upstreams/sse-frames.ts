/** SSE frame writers, restated here so the mocks do not depend on `src/`. */

/** `data: <json>` + blank line. Google ends lines with CRLF, OpenAI with LF. */
export function sseData(payload: unknown, eol: "\n" | "\r\n" = "\n"): string {
  const data = typeof payload === "string" ? payload : JSON.stringify(payload);
  return `data: ${data}${eol}${eol}`;
}

/** `event: <name>` + `data: <json>` + blank line (Anthropic, OpenAI Responses). */
export function sseEvent(event: string, payload: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`;
}

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
};
