import { randomUUID } from "node:crypto";

/** A client-supplied `x-request-id` is honoured when it is sane text (≤128 bytes, no control characters). */
export function requestIdFrom(headers: Headers): string {
  const supplied = headers.get("x-request-id");
  if (supplied && supplied.length <= 128 && /^[\x21-\x7e]+$/.test(supplied)) return supplied;
  return randomUUID();
}
