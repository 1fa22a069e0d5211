import type { CommandContext } from "./command";

/** One block of human-readable output on stdout. */
export function print(context: CommandContext, text: string): void {
  context.io.stdout(text.endsWith("\n") ? text : `${text}\n`);
}

/** A route's JSON body, as `--json` promises: exactly what the server answered. */
export function printJson(context: CommandContext, value: unknown): void {
  context.io.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** `{ data: T[] }`, the envelope of every management listing. */
export function listData<T>(body: unknown): T[] {
  const data = (body as { data?: unknown } | undefined)?.data;
  return Array.isArray(data) ? (data as T[]) : [];
}
