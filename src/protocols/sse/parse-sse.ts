import type { SseEvent } from "../../ir/sse-event";
import { irError } from "../../ir";

/**
 * The most characters one event may hold while it is read (its data lines and the line not
 * yet ended): as much as a client may send in a body (32 MiB), enough for a streamed image's
 * base64. An upstream that never ends an event, or a line, would otherwise grow the
 * gateway's memory for as long as it sends: a hostile base URL behind a customer's own key
 * (BYOK) is one such upstream.
 */
export const MAX_SSE_EVENT_CHARS = 32 * 1024 * 1024;

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
  /** Characters of the data lines of the event being read. */
  private dataChars = 0;

  /**
   * `wholeFrames: false` reads every chunk line by line: what the whole-frame shortcut
   * (readWholeFrames) is tested against.
   */
  constructor(
    private readonly maxEventChars = MAX_SSE_EVENT_CHARS,
    private readonly wholeFrames = true,
  ) {}

  /** The complete events in `text`; throws the upstream's `upstream_invalid_response` when one event grows past the limit. */
  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    // At an event's start (nothing of one read yet), whole frames are read first.
    if (this.wholeFrames && this.buffer === "" && this.data.length === 0 && this.eventName === undefined && !this.pendingCr) {
      const read = this.readWholeFrames(text, events);
      if (read === text.length) return events;
      if (read > 0) text = text.slice(read);
    }
    if (this.pendingCr && text.startsWith("\n")) text = text.slice(1);
    this.pendingCr = false;
    // A chunk without a line end only lengthens the line being read: it is appended (a rope,
    // not a copy) and what came before is not searched again, so a line sent in many chunks
    // costs its length once, not its length for every chunk.
    // (The buffer holds no line end: it is the line not yet ended.)
    const lfInText = text.indexOf("\n");
    if (lfInText === -1 && text.indexOf("\r") === -1) {
      this.buffer += text;
      this.refuseOversizedEvent();
      return events;
    }
    const buf = this.buffer + text;
    let start = 0;
    // Lines are found with indexOf, not a loop over every character: an upstream's frames
    // are mostly JSON, and a native search over a frame costs a fraction of a JS loop over
    // it (test/bench/HISTORY.md). Most upstreams end lines with "\n" alone, so "\r" is
    // looked for again only while one can still come.
    let lf = lfInText === -1 ? -1 : this.buffer.length + lfInText;
    let cr = buf.indexOf("\r");
    while (lf !== -1 || cr !== -1) {
      let end: number;
      if (cr === -1 || (lf !== -1 && lf < cr)) {
        end = lf;
        start = this.lineTo(buf, start, end, end + 1, events);
      } else {
        end = cr;
        if (end + 1 < buf.length) {
          start = this.lineTo(buf, start, end, buf.charCodeAt(end + 1) === 10 ? end + 2 : end + 1, events);
        } else {
          // A "\r" that ends the chunk may be the first half of "\r\n".
          this.pendingCr = true;
          start = this.lineTo(buf, start, end, end + 1, events);
        }
        cr = buf.indexOf("\r", start);
      }
      if (lf !== -1 && lf < start) lf = buf.indexOf("\n", start);
    }
    this.buffer = start === 0 ? buf : buf.slice(start);
    this.refuseOversizedEvent();
    return events;
  }

  /**
   * Nearly every frame an upstream sends is one `data: …` line, or an `event: …` line and
   * one `data: …` line, and a blank line, all ended by "\n" (chat and Gemini send the one,
   * Messages and Responses the other), and nearly every chunk begins with such a frame. From
   * an event's start, each whole frame of that form at the start of `text` is read in one step:
   * a search for its line ends and a slice of each value, the event as the line-by-line
   * reading below makes it (the same fields, in the same order). Returns how much of `text`
   * it read; the rest (another form, a "\r" anywhere, a frame not yet ended) is read line by
   * line from there. A long stream's chunk is one frame: read so, it costs a third of the
   * line loop's time, and the gateway ~1.3 µs less a chunk (test/bench/HISTORY.md, "SSE
   * frames read whole").
   */
  private readWholeFrames(text: string, events: SseEvent[]): number {
    if (text.indexOf("\r") !== -1) return 0;
    let at = 0;
    while (at < text.length) {
      let eventName: string | undefined;
      let dataAt = at;
      // "event: " and "data: ": the first letter is the cheap test.
      if (text.charCodeAt(at) === 101) {
        if (!text.startsWith("event: ", at)) break;
        const lf = text.indexOf("\n", at);
        if (lf === -1) break;
        eventName = text.slice(at + 7, lf);
        dataAt = lf + 1;
      }
      if (text.charCodeAt(dataAt) !== 100 || !text.startsWith("data: ", dataAt)) break;
      const end = text.indexOf("\n", dataAt);
      if (end === -1 || text.charCodeAt(end + 1) !== 10) break;
      const event: SseEvent = { data: text.slice(dataAt + 6, end) };
      if (eventName !== undefined) event.event = eventName;
      if (this.lastId !== undefined) event.id = this.lastId;
      events.push(event);
      at = end + 2;
    }
    return at;
  }

  private refuseOversizedEvent(): void {
    if (this.dataChars + this.buffer.length <= this.maxEventChars) return;
    this.buffer = "";
    this.data.length = 0;
    this.dataChars = 0;
    throw irError("upstream_invalid_response", `upstream stream event is longer than ${this.maxEventChars} characters`);
  }

  /** Processes the line buf[start, end) and returns where the next one starts (`next`). */
  private lineTo(buf: string, start: number, end: number, next: number, events: SseEvent[]): number {
    // Nearly every line is "data: …": its value is cut from the chunk in one slice, not two.
    if (buf.charCodeAt(start) === 100 && buf.startsWith("data:", start)) {
      const value = buf.slice(buf.charCodeAt(start + 5) === 32 ? start + 6 : start + 5, end);
      this.data.push(value);
      this.dataChars += value.length;
    } else {
      this.processLine(buf.slice(start, end), events);
    }
    return next;
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
        const event: SseEvent = { data: this.data.length === 1 ? this.data[0]! : this.data.join("\n") };
        if (this.eventName !== undefined) event.event = this.eventName;
        if (this.lastId !== undefined) event.id = this.lastId;
        events.push(event);
        this.data.length = 0;
        this.dataChars = 0;
      }
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
        this.dataChars += value.length;
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
