import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { Static, TSchema } from "@sinclair/typebox";
import { badRequest } from "../errors/api-error";

/**
 * Strict body validation with TypeBox. Routes validate in the handler rather than
 * through Elysia's `body` option because Elysia (a) coerces numeric strings into
 * integers, and (b) validates before authentication — a stranger would get a 400
 * describing the schema instead of a 401.
 */
export function bodyValidator<T extends TSchema>(schema: T) {
  const compiled = TypeCompiler.Compile(schema);
  const validate = (body: unknown): Static<T> => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest("request body must be a JSON object");
    if (compiled.Check(body)) return body as Static<T>;
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
