import type { ArgumentSpec, OptionSpec, ParsedArgs } from "./parse-args";

/** Where a command writes and what it reads; the entry point wires the process's own. */
export interface CommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The whole of standard input (a BYOK key piped in). */
  readStdin(): Promise<string>;
  /** A key typed at a terminal, without echoing it. */
  readHiddenLine(prompt: string): Promise<string>;
  stdinIsTerminal: boolean;
}

export interface CommandContext {
  env: Record<string, string | undefined>;
  io: CommandIo;
  args: ParsedArgs;
  /** `--json`: print the route's JSON body rather than a table. */
  json: boolean;
  /** The usage text, for usage errors a command finds itself. */
  usage: string;
}

export interface Command {
  /** The words that name it: ["keys", "create"]. */
  path: string[];
  summary: string;
  /** Arguments and options after the command words, as shown in the usage line. */
  synopsis: string;
  arguments: ArgumentSpec[];
  options: OptionSpec[];
  /** Extra help lines after the options. */
  notes?: string[];
  run(context: CommandContext): Promise<void>;
}

/** `switchyard keys create --name <display name> …` */
export function usageLine(command: Command): string {
  return `switchyard ${command.path.join(" ")}${command.synopsis ? ` ${command.synopsis}` : ""}`;
}
