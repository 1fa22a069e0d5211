/**
 * Operator CLI over the operator API, so nobody needs to write SQL:
 *
 *   bun run admin create-account --email ada@example.com [--credit 5000000]
 *   bun run admin add-credits <account_id> <amount_micro_usd>
 *   bun run admin rotate-kek        (a new current BYOK key-encryption key)
 *   bun run admin reseal            (re-seal stored BYOK keys under the current KEK)
 *
 * Talks to SWITCHYARD_URL (default http://localhost:$PORT or :8080) with ADMIN_TOKEN.
 * Prints the JSON answer; exits 1 with the error on failure.
 */
const USAGE = `usage:
  bun run admin create-account --email <email> [--credit <micro_usd>]
  bun run admin add-credits <account_id> <amount_micro_usd>
  bun run admin rotate-kek
  bun run admin reseal
environment: ADMIN_TOKEN (required), SWITCHYARD_URL (default http://localhost:\${PORT:-8080})`;

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index === -1 ? undefined : args[index + 1];
}

function integerArg(value: string | undefined, what: string): number {
  const number = Number(value);
  if (value === undefined || !Number.isInteger(number)) throw new Error(`${what} must be an integer (micro-USD)`);
  return number;
}

async function post(path: string, body: unknown): Promise<unknown> {
  const token = process.env.ADMIN_TOKEN;
  if (!token) throw new Error("ADMIN_TOKEN is not set");
  const base = (process.env.SWITCHYARD_URL ?? `http://localhost:${process.env.PORT ?? 8080}`).replace(/\/+$/, "");
  const response = await fetch(base + path, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.status}: ${text}`);
  return JSON.parse(text);
}

async function run(args: string[]): Promise<unknown> {
  const [command, ...rest] = args;
  switch (command) {
    case "create-account": {
      const email = option(rest, "--email");
      if (!email) throw new Error("--email is required");
      const credit = option(rest, "--credit");
      return post("/admin/accounts", { email, ...(credit === undefined ? {} : { credit_micro_usd: integerArg(credit, "--credit") }) });
    }
    case "add-credits": {
      const [accountId, amount] = rest;
      if (!accountId) throw new Error("account_id is required");
      return post(`/admin/accounts/${encodeURIComponent(accountId)}/credits`, { amount_micro_usd: integerArg(amount, "amount") });
    }
    case "rotate-kek":
      return post("/admin/byok/rotate-kek", {});
    case "reseal":
      return post("/admin/byok/reseal", {});
    default:
      throw new Error(USAGE);
  }
}

try {
  console.log(JSON.stringify(await run(process.argv.slice(2)), null, 2));
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}
export {};
