/**
 * The client address of a request, for throttling failed sign-ins and user-code guesses.
 * Bun knows the peer's address only at the listener (`server.requestIP`), so the listener
 * records it here for the request it hands to the routes.
 */
const addresses = new WeakMap<Request, string>();

export function rememberClientAddress(request: Request, peerAddress: string | undefined): void {
  if (peerAddress) addresses.set(request, peerAddress);
}

/**
 * The peer's address; behind `trustedProxyHops` reverse proxies, the address the nearest
 * of them saw, taken from the right of `X-Forwarded-For` (the entries further left are
 * whatever the client wrote, so they are never trusted). "unknown" when neither exists
 * (an in-process call): such requests share one counter, which fails safe.
 */
export function clientAddress(request: Request, trustedProxyHops = 0): string {
  if (trustedProxyHops > 0) {
    const forwarded = request.headers.get("x-forwarded-for");
    if (forwarded) {
      const hops = forwarded.split(",").map((entry) => entry.trim()).filter(Boolean);
      const address = hops[hops.length - trustedProxyHops];
      if (address) return address.slice(0, 64);
    }
  }
  return addresses.get(request) ?? "unknown";
}
