/** One Server-Sent Event, as parsed from the wire (WHATWG HTML §9.2). */
export interface SseEvent {
  /** The `event:` field; undefined means the default "message". */
  event?: string;
  data: string;
  id?: string;
}
