import { ApiError, badRequest } from "../errors/api-error";
import { BodyTooLargeError, readBodyWithin } from "../http/request-body";

/**
 * The body parser of every Elysia route that reads a body (management, admin; the
 * inference routes read their own). The body is read within `limit` bytes whether or not
 * the client sent a Content-Length, so a 2 MiB chunked body is a 413 like a declared
 * one. JSON (or no content type) is parsed, a form is read as fields like Elysia's own
 * parser did, anything else stays text, which the body validators refuse with a 400.
 */
export async function parseManagementBody(request: Request, contentType: string | undefined, limit: number): Promise<unknown> {
  let text: string;
  try {
    text = await readBodyWithin(request, limit);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new ApiError("payload_too_large", error.message, { headers: { connection: "close" } }); // see closingConnection
    throw error;
  }
  // No body at all (a DELETE with a content type): as if none was sent.
  if (text === "") return undefined;
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (type === "" || type === "application/json" || type.endsWith("+json")) {
    try {
      return JSON.parse(text);
    } catch {
      throw badRequest("request body is not valid JSON");
    }
  }
  if (type === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(text));
  return text;
}
