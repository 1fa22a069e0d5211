import { assertAddressableId } from "../auth/path-ids";
import { badRequest } from "../errors/api-error";
import { field } from "./console-context";

/** Control characters never belong in a name: a NUL would not even reach the database. */
const CONTROL = /[\u0000-\u001f\u007f]/;

/** A one-line text field, trimmed; a 400 naming the field by its label when it breaks a rule. */
export function oneLineField(body: unknown, name: string, label: string, options: { max: number; required?: boolean }): string {
  const value = field(body, name).trim();
  if (value === "" && options.required) throw badRequest(`${label} is required.`);
  if (CONTROL.test(value)) throw badRequest(`${label} must be one line of text.`);
  if ([...value].length > options.max) throw badRequest(`${label} must be at most ${options.max} characters.`);
  return value;
}

/** A multi-line text field (a system prompt): line breaks and tabs allowed, other control characters not. */
export function textAreaField(body: unknown, name: string, label: string, max: number): string {
  const value = field(body, name).replace(/\r\n/g, "\n");
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value)) throw badRequest(`${label} must not contain control characters.`);
  if ([...value].length > max) throw badRequest(`${label} must be at most ${max} characters.`);
  return value;
}

/** A count typed into a form: empty is none; anything else a whole number of at least 1 (commas and spaces ignored). */
export function optionalCountField(body: unknown, name: string, label: string): number | null {
  const text = field(body, name).trim().replace(/[,_\s]/g, "");
  if (text === "") return null;
  if (!/^\d{1,16}$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) throw badRequest(`${label} must be a whole number of at least 1.`);
  return Number(text);
}

/**
 * An optional date field (`<input type="date">`, YYYY-MM-DD) as the last millisecond of
 * that day in UTC, RFC 3339; undefined when empty. A day that does not exist, or one
 * that has already ended in UTC, is a 400.
 */
export function endOfDayField(body: unknown, name: string, label: string): string | undefined {
  const text = field(body, name).trim();
  if (text === "") return undefined;
  const end = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(`${text}T23:59:59.999Z`) : undefined;
  if (!end || Number.isNaN(end.getTime()) || end.toISOString().slice(0, 10) !== text) throw badRequest(`${label} must be a date such as 2030-12-31.`);
  if (end.getTime() <= Date.now()) throw badRequest(`${label} must be today or later (UTC).`);
  return end.toISOString();
}

/**
 * The `id` a row's button posts. One that cannot be an id of ours (a NUL, 10 kB of text)
 * is the same 404 as a missing one, before it reaches a query.
 */
export function idField(body: unknown, what: string): string {
  const id = field(body, "id");
  assertAddressableId(id, what);
  return id;
}

/** The values of the checked boxes named `<prefix><value>`, in the order `known` lists them, then any others sent. */
export function checkedValues(body: unknown, prefix: string, known: readonly string[]): string[] {
  if (typeof body !== "object" || body === null) return [];
  const sent = Object.keys(body).filter((name) => name.startsWith(prefix)).map((name) => name.slice(prefix.length));
  return [...known.filter((value) => sent.includes(value)), ...sent.filter((value) => !known.includes(value))];
}

/** Every field of a form as strings, to fill the form again after a refusal. Secrets are left out by the caller. */
export function submittedValues(body: unknown, omit: readonly string[] = []): Record<string, string> {
  const values: Record<string, string> = {};
  if (typeof body !== "object" || body === null) return values;
  for (const [name, value] of Object.entries(body)) if (typeof value === "string" && !omit.includes(name) && name !== "csrf_token") values[name] = value;
  return values;
}
