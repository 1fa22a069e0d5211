export type { SseEvent } from "../../ir/sse-event";
export * from "./parse-sse";
export * from "./serialize-sse";
export * from "./frame-bounds";
