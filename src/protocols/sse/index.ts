export * from "./sse-event";
export * from "./parse-sse";
export * from "./serialize-sse";
