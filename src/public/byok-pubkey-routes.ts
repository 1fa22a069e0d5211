import { Elysia } from "elysia";
import type { Services } from "../services";

/** Does an If-None-Match header name this ETag (or `*`)? Weak validators compare equal too. */
function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(",").some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, "");
    return tag === "*" || tag === etag;
  });
}

/**
 * `GET /v1/byok/encryption-pubkey` (public): the current KEK's X25519 public key, which
 * customers seal their provider keys to (docs/api/byok.md "BYOK"). The ETag is the quoted kek_id, so
 * a client revalidates cheaply and learns of a rotation at once.
 */
export function byokPubkeyRoutes(services: Services) {
  return new Elysia({ name: "byok-pubkey", normalize: false }).get(
    "/v1/byok/encryption-pubkey",
    async ({ request }) => {
      const kek = await services.keks.current();
      const etag = `"${kek.kek_id}"`;
      const headers = { etag, "cache-control": "private, max-age=300" };
      if (matches(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
      return new Response(JSON.stringify({ kek_id: kek.kek_id, public_key: kek.public_key }), {
        status: 200,
        headers: { ...headers, "content-type": "application/json" },
      });
    },
    { detail: { summary: "The current BYOK key-encryption public key (X25519, standard base64) to seal provider keys to", tags: ["byok"] } },
  );
}
