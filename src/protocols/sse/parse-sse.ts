import type { SseEvent } from "../../ir/sse-event";

/**
 * Incremental SSE parser (WHATWG HTML §9.2.6). Feed it decoded text in chunks of
 * any size; it returns the complete events. Handles CRLF/CR/LF line endings,
 * multi-line `data:`, comments (`:keepalive`) and a chunk boundary anywhere,
 * including between "\r" and "\n".
 */
export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private eventName: string | undefined;
  private lastId: string | undefined;
  private pendingCr = false;

  push(text: string): SseEvent[] {
    if (this.pendingCr && text.startsWith("\n")) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const events: SseEvent[] = [];
    let start = 0;
    const buf = this.buffer;
    for (let i = 0; i < buf.length; i++) {
      const ch = buf.charCodeAt(i);
      if (ch !== 10 && ch !== 13) continue;
      const line = buf.slice(start, i);
      if (ch === 13) {
        if (i + 1 < buf.length) {
          if (buf.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
      this.processLine(line, events);
    }
    this.buffer = buf.slice(start);
    return events;
  }

  /** End of input: a final event without its blank line is still dispatched. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.buffer.length > 0) this.processLine(this.buffer, events);
    this.buffer = "";
    this.processLine("", events);
    return events;
  }

  private processLine(line: string, events: SseEvent[]): void {
    if (line === "") {
      if (this.data.length > 0) {
        const event: SseEvent = { data: this.data.join("\n") };
        if (this.eventName !== undefined) event.event = this.eventName;
        if (this.lastId !== undefined) event.id = this.lastId;
        events.push(event);
      }
      this.data = [];
      this.eventName = undefined;
      return;
    }
    if (line.charCodeAt(0) === 58) return; // ":" comment
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case "data":
        this.data.push(value);
        break;
      case "event":
        this.eventName = value;
        break;
      case "id":
        if (!value.includes("\0")) this.lastId = value;
        break;
      default:
        break; // "retry" and unknown fields are ignored
    }
  }
}
