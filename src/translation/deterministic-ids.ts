import type { CodecContext } from "../ir";

/**
 * Codecs take ids from the context so they stay pure. Ids derive from the request
 * id and a counter: unique per request, reproducible in tests.
 */
export function withIdSource(context: Omit<CodecContext, "newId">): CodecContext {
  let counter = 0;
  const stem = context.requestId.replace(/[^A-Za-z0-9]/g, "").slice(0, 24);
  return { ...context, newId: (prefix: string) => `${prefix}_${stem}${(counter++).toString(36)}` };
}
