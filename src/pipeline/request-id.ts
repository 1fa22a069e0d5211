/**
 * A client-supplied `x-request-id` is honoured when it is sane text (≤128 bytes, no
 * control characters). Otherwise a UUIDv7: time-ordered, so the settlement index on
 * (account, request id) grows at its right edge instead of taking random inserts.
 */
export function requestIdFrom(headers: Headers): string {
  const supplied = headers.get("x-request-id");
  if (supplied && supplied.length <= 128 && /^[\x21-\x7e]+$/.test(supplied)) return supplied;
  return Bun.randomUUIDv7();
}
