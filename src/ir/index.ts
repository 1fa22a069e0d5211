export * from "./protocol-id";
export * from "./ir-content";
export * from "./ir-request";
export * from "./ir-response";
export * from "./ir-stream";
export * from "./ir-error";
export * from "./ir-warning";
export * from "./codec";
