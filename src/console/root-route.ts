import { Elysia } from "elysia";
import { ApiError, errorResponse } from "../errors/api-error";
import { redirect } from "./console-page";

/**
 * Whether a request is a browser navigation: it names `text/html` among what it accepts.
 * API clients send `application/json`, `*\/*` or nothing, and keep the JSON answer.
 */
export function wantsHtml(request: Request): boolean {
  const accept = request.headers.get("accept") ?? "";
  return accept.split(",").some((part) => part.trim().split(";")[0]!.trim().toLowerCase() === "text/html");
}

/**
 * `/`: a browser is sent to the console (303, a GET of `/console`); anything else gets
 * the JSON 404 every unknown path answers with, as before the console had a front door.
 */
export function rootRoute() {
  return new Elysia({ name: "console-root", normalize: false }).get("/", ({ request }) =>
    wantsHtml(request) ? redirect("/console") : errorResponse(new ApiError("not_found", "route not found")),
  );
}
