/**
 * The events of an SSE body (https://html.spec.whatwg.org/multipage/server-sent-events.html):
 * blocks separated by a blank line (LF or CRLF), `event:` naming the event and `data:` lines
 * joined by "\n". Written here so the expectations never depend on the gateway's own parser.
 */
export interface SseEvent {
  event?: string;
  data: string;
}

export function sseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
    }
    if (data.length > 0) events.push({ ...(event === undefined ? {} : { event }), data: data.join("\n") });
  }
  return events;
}

/** The JSON payloads of an SSE body, `[DONE]` left out, each with its event name. */
export function sseJsonEvents(text: string): Array<{ event?: string; json: any }> {
  return sseEvents(text)
    .filter((event) => event.data.trim() !== "[DONE]")
    .map((event) => ({ ...(event.event === undefined ? {} : { event: event.event }), json: JSON.parse(event.data) }));
}
