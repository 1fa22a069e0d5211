import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { Static, TSchema } from "@sinclair/typebox";
import { badRequest } from "../errors/api-error";

/**
 * Strict body validation with TypeBox. Routes validate in the handler rather than
 * through Elysia's `body` option because Elysia (a) coerces numeric strings into
 * integers, and (b) validates before authentication — a stranger would get a 400
 * describing the schema instead of a 401. Text PostgreSQL cannot store (NUL) or that
 * is not valid Unicode is refused here too, naming the field, before it reaches SQL.
 */
export function bodyValidator<T extends TSchema>(schema: T) {
  const compiled = TypeCompiler.Compile(schema);
  const validate = (body: unknown): Static<T> => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("request body must be a JSON object");
    if (compiled.Check(body)) {
      const bad = firstUnstorableString(body);
      if (bad !== undefined) throw badRequest(`${bad} must not contain NUL characters or unpaired surrogates`);
      return body as Static<T>;
    }
    const first = compiled.Errors(body).First();
    const field = first?.path ? first.path.replace(/^\//, "").replace(/\//g, ".") : "body";
    if (first?.message.startsWith("Unexpected property")) throw badRequest(`unknown field: ${field}`);
    throw badRequest(`${field}: ${first?.message ?? "invalid value"}`);
  };
  /** For the OpenAPI document: `detail: { ...validate.doc }`. */
  // A plain JSON Schema copy: TypeBox's symbol-keyed metadata has no place in OpenAPI.
  const jsonSchema = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  validate.doc = { requestBody: { required: true, content: { "application/json": { schema: jsonSchema } } } };
  return validate;
}

/**
 * The path ("scopes.2") of the first string in an already validated body that holds a
 * NUL (PostgreSQL text refuses it: "invalid byte sequence") or an unpaired surrogate
 * (not representable in UTF-8); undefined when every string is storable.
 */
function firstUnstorableString(body: object): string | undefined {
  const pending: Array<[unknown, string]> = [[body, ""]];
  while (pending.length > 0) {
    const [value, path] = pending.pop()!;
    if (typeof value === "string") {
      if (value.includes("\0") || !value.isWellFormed()) return path || "body";
    } else if (typeof value === "object" && value !== null) {
      for (const [key, child] of Object.entries(value)) pending.push([child, path ? `${path}.${key}` : key]);
    }
  }
  return undefined;
}
