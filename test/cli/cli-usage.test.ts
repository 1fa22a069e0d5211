import { describe, expect, test } from "bun:test";
import { COMMANDS } from "../../src/cli/switchyard/commands";
import { freshConfigHome, runSwitchyard } from "./run-switchyard";

/** Command-line handling only: every case here fails before any request (the URL points nowhere). */
const env = { SWITCHYARD_URL: "http://127.0.0.1:1", XDG_CONFIG_HOME: freshConfigHome() };

describe("help", () => {
  test("--help at the top level lists every command, the environment variables and the exit codes, exit 0", async () => {
    const result = await runSwitchyard(["--help"], env);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe("");
    for (const command of COMMANDS) expect(result.stdout).toContain(`  ${command.path.join(" ")}  `);
    for (const text of ["SWITCHYARD_URL", "SWITCHYARD_API_KEY", "XDG_CONFIG_HOME", "~/.config/switchyard/", "exit codes: 0 success, 1", "2 bad usage"]) {
      expect(result.stdout).toContain(text);
    }
  });

  test("every command answers --help with its usage line and options, exit 0", async () => {
    const results = await Promise.all(COMMANDS.map((command) => runSwitchyard([...command.path, "--help"], env)));
    results.forEach((result, index) => {
      const command = COMMANDS[index]!;
      expect(result.exitCode).toBe(0);
      expect(result.stderr).toBe("");
      expect(result.stdout.startsWith(`usage: switchyard ${command.path.join(" ")}`)).toBe(true);
      expect(result.stdout).toContain("--json");
      for (const option of command.options) expect(result.stdout).toContain(`--${option.name}`);
    });
  });

  test("`switchyard help keys create` and `switchyard keys --help` help too", async () => {
    const about = await runSwitchyard(["help", "keys", "create"], env);
    expect(about.exitCode).toBe(0);
    expect(about.stdout).toStartWith("usage: switchyard keys create --name <display name> --scope <scope>…");
    const group = await runSwitchyard(["keys", "--help"], env);
    expect(group.exitCode).toBe(0);
    expect(group.stdout).toStartWith("usage: switchyard keys <list|create|revoke>");
  });
});

describe("bad usage exits 2 with the usage text on stderr and nothing on stdout", () => {
  const cases: [string, string[], string][] = [
    ["no command", [], "missing command"],
    ["an unknown command", ["frobnicate"], 'unknown command "frobnicate"'],
    ["an unknown subcommand", ["keys", "rotate"], 'unknown command keys "rotate"'],
    ["a group without its subcommand", ["byok"], "missing byok command"],
    ["an unknown option", ["whoami", "--verbose"], "unknown option --verbose"],
    ["an option without its value", ["requests", "--limit"], "--limit needs a value"],
    ["a switch given a value", ["keys", "list", "--json=yes"], "--json takes no value"],
    ["a missing argument", ["keys", "revoke"], "missing argument <id>"],
    ["an extra argument", ["whoami", "extra"], "too many arguments"],
    ["keys create without --name", ["keys", "create", "--scope", "keys:read"], "--name is required"],
    ["keys create without --scope", ["keys", "create", "--name", "x"], "at least one --scope is required"],
    ["keys create with an unknown scope", ["keys", "create", "--name", "x", "--scope", "keys:steal"], "unknown scope: keys:steal"],
    ["login with an unknown scope", ["login", "--scope", "usage:read everything"], "unknown scope: everything"],
    ["a non-repeatable option twice", ["usage", "--from", "2026-01-01", "--from", "2026-02-01"], "--from may be given only once"],
    ["policies list with an unknown kind", ["policies", "list", "--kind", "quota"], "--kind must be one of"],
  ];
  for (const [name, args, message] of cases) {
    test(name, async () => {
      const result = await runSwitchyard(args, env);
      expect(result.exitCode).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toStartWith(`switchyard: ${message}`);
      expect(result.stderr).toContain("usage: switchyard");
    });
  }

  test("an unexpected argument that could be a secret is not echoed", async () => {
    const result = await runSwitchyard(["brk_abc.secretvalue"], env);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).not.toContain("secretvalue");
  });
});

describe("not signed in", () => {
  test("logout without a stored sign-in exits 1 and says to run switchyard login", async () => {
    const result = await runSwitchyard(["logout"], env);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe("switchyard: not signed in, nothing to log out of\nhint: run `switchyard login` to sign in\n");
  });

  test("whoami without a stored sign-in exits 1 the same way", async () => {
    const result = await runSwitchyard(["whoami", "--json"], env);
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("switchyard login");
  });
});
