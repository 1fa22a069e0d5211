import { usageLine, type Command } from "./command";
import { GLOBAL_OPTIONS, type OptionSpec } from "./parse-args";
import { DEFAULT_SERVER_URL } from "./server-url";

const ENVIRONMENT = [
  "environment:",
  `  SWITCHYARD_URL       the server (default ${DEFAULT_SERVER_URL}; once signed in, the server of the sign-in)`,
  "  SWITCHYARD_API_KEY   a brk_… API key to use instead of the stored sign-in, for every command",
  "                       but login and logout (scripts, CI)",
  "  XDG_CONFIG_HOME      the sign-in is stored in $XDG_CONFIG_HOME/switchyard/credentials.json",
  "                       (else ~/.config/switchyard/), readable by you only",
];

const EXIT_CODES = "exit codes: 0 success, 1 refused by the server or not signed in, 2 bad usage";

function column(rows: [string, string][]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

export function topLevelHelp(commands: Command[]): string {
  return [
    "switchyard: the Switchyard command-line client",
    "",
    "usage: switchyard <command> [options]",
    "",
    "commands:",
    ...column(commands.map((command) => [command.path.join(" "), command.summary])),
    "",
    "Every command takes --json (print the server's JSON answer) and --help (its arguments and options).",
    "",
    ...ENVIRONMENT,
    "",
    EXIT_CODES,
  ].join("\n");
}

/** The commands under one first word: `switchyard keys`. */
export function groupHelp(group: string, commands: Command[]): string {
  const members = commands.filter((command) => command.path[0] === group);
  return [
    `usage: switchyard ${group} <${members.map((command) => command.path[1]).join("|")}> [options]`,
    "",
    ...column(members.map((command) => [command.path.join(" "), command.summary])),
    "",
    `\`switchyard ${group} <command> --help\` describes one.`,
  ].join("\n");
}

function optionLabel(option: OptionSpec): string {
  return `--${option.name}${option.value ? ` ${option.value}` : ""}${option.repeatable ? " (repeatable)" : ""}`;
}

export function commandHelp(command: Command): string {
  return [
    `usage: ${usageLine(command)}`,
    "",
    `${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`,
    ...(command.notes ?? []),
    "",
    "options:",
    ...column([...command.options, ...GLOBAL_OPTIONS].map((option) => [optionLabel(option), option.description])),
    "",
    ...ENVIRONMENT,
    "",
    EXIT_CODES,
  ].join("\n");
}
