import { CliError, UsageError } from "./cli-error";
import type { Command, CommandIo } from "./command";
import { COMMANDS } from "./commands";
import { commandHelp, groupHelp, topLevelHelp } from "./help-text";
import { parseArgs } from "./parse-args";

const HELP_WORDS = new Set(["--help", "-h", "help"]);

/** Echo a command word back only when it looks like one (a mistyped secret is not repeated). */
function quoted(word: string): string {
  return /^[a-z][a-z-]{0,30}$/.test(word) ? `"${word}"` : "(not shown)";
}

function findCommand(argv: string[]): Command | undefined {
  return COMMANDS.find((command) => command.path.every((word, index) => argv[index] === word));
}

/** Runs one command line; resolves with the exit code (0, 1 or 2). */
export async function runCli(argv: string[], env: Record<string, string | undefined>, io: CommandIo): Promise<number> {
  try {
    const [first, second] = argv;
    if (first === undefined) throw new UsageError("missing command", topLevelHelp(COMMANDS));
    if (HELP_WORDS.has(first)) {
      const about = second === undefined ? undefined : findCommand(argv.slice(1));
      io.stdout(`${about ? commandHelp(about) : topLevelHelp(COMMANDS)}\n`);
      return 0;
    }
    const command = findCommand(argv);
    if (!command) {
      if (COMMANDS.some((candidate) => candidate.path.length > 1 && candidate.path[0] === first)) {
        const help = groupHelp(first, COMMANDS);
        if (second !== undefined && HELP_WORDS.has(second)) {
          io.stdout(`${help}\n`);
          return 0;
        }
        throw new UsageError(second === undefined ? `missing ${first} command` : `unknown command ${first} ${quoted(second)}`, help);
      }
      throw new UsageError(`unknown command ${quoted(first)}`, topLevelHelp(COMMANDS));
    }
    const help = commandHelp(command);
    const args = parseArgs(argv.slice(command.path.length), command.options, command.arguments, help);
    if (args.switches.has("help")) {
      io.stdout(`${help}\n`);
      return 0;
    }
    await command.run({ env, io, args, json: args.switches.has("json"), usage: help });
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`switchyard: ${error.message}\n\n${error.usage}\n`);
      return 2;
    }
    if (error instanceof CliError) {
      io.stderr(`switchyard: ${error.message}\n${error.hint ? `hint: ${error.hint}\n` : ""}`);
      return 1;
    }
    io.stderr(`switchyard: unexpected error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
