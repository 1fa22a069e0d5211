/**
 * Operator CLI over the operator API, so nobody needs to write SQL:
 *
 *   npm run admin -- create-account --email ada@example.com [--credit 5000000] [--password-stdin]
 *   npm run admin -- add-credits <account_id> <amount_micro_usd>
 *   npm run admin -- set-password <account_id>   (the password on stdin)
 *   npm run admin -- rotate-kek        (a new current BYOK key-encryption key)
 *   npm run admin -- reseal            (re-seal stored BYOK keys under the current KEK)
 *
 * Talks to SWITCHYARD_URL (default http://localhost:$PORT or :8080) with ADMIN_TOKEN.
 * Prints the JSON answer; exits 1 with the error on failure. A password is read from
 * stdin, never from the command line, where other users and shell history would see it.
 */
const USAGE = `usage:
  npm run admin -- create-account --email <email> [--credit <micro_usd>] [--password-stdin]
  npm run admin -- add-credits <account_id> <amount_micro_usd>
  npm run admin -- set-password <account_id>      (reads the password from stdin)
  npm run admin -- rotate-kek
  npm run admin -- reseal
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

/** The password piped on stdin: its first line, without the line break. */
async function passwordFromStdin(): Promise<string> {
  const text = await Bun.stdin.text();
  const password = text.split(/\r?\n/)[0] ?? "";
  if (password === "") throw new Error("no password on stdin (pipe it in, e.g. from a password manager)");
  return password;
}

async function callAdmin(path: string, body: unknown, method: "POST" | "PUT" = "POST"): Promise<unknown> {
  const token = process.env.ADMIN_TOKEN;
  if (!token) throw new Error("ADMIN_TOKEN is not set");
  const base = (process.env.SWITCHYARD_URL ?? `http://localhost:${process.env.PORT ?? 8080}`).replace(/\/+$/, "");
  const response = await fetch(base + path, {
    method,
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
      const password = rest.includes("--password-stdin") ? await passwordFromStdin() : undefined;
      return callAdmin("/admin/accounts", {
        email,
        ...(credit === undefined ? {} : { credit_micro_usd: integerArg(credit, "--credit") }),
        ...(password === undefined ? {} : { password }),
      });
    }
    case "set-password": {
      const [accountId] = rest;
      if (!accountId) throw new Error("account_id is required");
      return callAdmin(`/admin/accounts/${encodeURIComponent(accountId)}/password`, { password: await passwordFromStdin() }, "PUT");
    }
    case "add-credits": {
      const [accountId, amount] = rest;
      if (!accountId) throw new Error("account_id is required");
      return callAdmin(`/admin/accounts/${encodeURIComponent(accountId)}/credits`, { amount_micro_usd: integerArg(amount, "amount") });
    }
    case "rotate-kek":
      return callAdmin("/admin/byok/rotate-kek", {});
    case "reseal":
      return callAdmin("/admin/byok/reseal", {});
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
