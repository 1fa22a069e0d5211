import { Elysia } from "elysia";
import { errorResponse, notFound } from "../errors/api-error";

const ASSETS = new URL("./docs-assets/", import.meta.url);
const TYPES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "docs.js": "text/javascript; charset=utf-8",
  "docs.css": "text/css; charset=utf-8",
};

function asset(name: string): Response {
  return new Response(Bun.file(new URL(name, ASSETS)), {
    headers: { "content-type": TYPES[name] ?? "application/octet-stream", "cache-control": "public, max-age=300" },
  });
}

/** The API documentation page; every asset is served from here, never a CDN. */
export function docsRoutes() {
  return new Elysia({ name: "docs", normalize: false })
    .get("/docs", () => asset("index.html"), { detail: { hide: true } })
    .get("/docs/assets/:file", ({ params }) => {
      // Own keys only: `in` would also find "constructor" or "toString" on Object.prototype.
      if (!Object.hasOwn(TYPES, params.file) || params.file === "index.html") return errorResponse(notFound("asset"));
      return asset(params.file);
    }, { detail: { hide: true } });
}
