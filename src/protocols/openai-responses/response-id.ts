/**
 * The public Responses id is `brc_` + base64url without padding of Switchyard's request id.
 * The prefix is reserved so a later `previous_response_id` can be
 * recognised as ours and decoded strictly.
 */
export const RESPONSE_ID_PREFIX = "brc_";

export function encodeResponseId(requestId: string): string {
  return RESPONSE_ID_PREFIX + Buffer.from(requestId, "utf8").toString("base64url");
}

/** Returns the request id, or undefined when `id` is not a well-formed Switchyard response id. */
export function decodeResponseId(id: string): string | undefined {
  if (!id.startsWith(RESPONSE_ID_PREFIX)) return undefined;
  const payload = id.slice(RESPONSE_ID_PREFIX.length);
  if (payload === "" || !/^[A-Za-z0-9_-]+$/.test(payload) || payload.length % 4 === 1) return undefined;
  const requestId = Buffer.from(payload, "base64url").toString("utf8");
  // Strict: only the canonical encoding of the decoded id is accepted.
  return encodeResponseId(requestId) === id ? requestId : undefined;
}
