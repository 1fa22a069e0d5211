import { UsageError } from "./cli-error";

export interface OptionSpec {
  /** Without the leading dashes: "scope". */
  name: string;
  /** Shown in help, e.g. "<display name>"; absent for a switch that takes no value. */
  value?: string;
  /** May be given more than once; every value is kept. */
  repeatable?: boolean;
  description: string;
}

export interface ArgumentSpec {
  name: string;
  required: boolean;
}

export interface ParsedArgs {
  /** Values of options that take one, in the order given. */
  values: Map<string, string[]>;
  /** Switches present (options without a value), `json` and `help` included. */
  switches: Set<string>;
  positionals: string[];
}

/** Every command takes these. */
export const GLOBAL_OPTIONS: OptionSpec[] = [
  { name: "json", description: "print the server's JSON answer instead of a table" },
  { name: "help", description: "show this help" },
];

/**
 * Reads `--name value`, `--name=value`, switches and positionals; `--` ends the options.
 * Anything the command does not declare is a usage error (exit 2). An unexpected
 * argument is never echoed back: it may be a secret typed in the wrong place.
 */
export function parseArgs(argv: string[], options: OptionSpec[], argumentsSpec: ArgumentSpec[], usage: string): ParsedArgs {
  const known = new Map([...options, ...GLOBAL_OPTIONS].map((option) => [option.name, option]));
  const parsed: ParsedArgs = { values: new Map(), switches: new Set(), positionals: [] };
  let optionsEnded = false;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (optionsEnded || !arg.startsWith("-") || arg === "-") {
      parsed.positionals.push(arg);
      continue;
    }
    if (arg === "--") {
      optionsEnded = true;
      continue;
    }
    if (arg === "-h") {
      parsed.switches.add("help");
      continue;
    }
    if (!arg.startsWith("--")) throw new UsageError(`unknown option ${arg.slice(0, 2)}`, usage);
    const equals = arg.indexOf("=");
    const name = arg.slice(2, equals === -1 ? undefined : equals);
    const option = known.get(name);
    if (!option) throw new UsageError(`unknown option --${name}`, usage);
    if (option.value === undefined) {
      if (equals !== -1) throw new UsageError(`--${name} takes no value`, usage);
      parsed.switches.add(name);
      continue;
    }
    let value: string | undefined;
    if (equals !== -1) value = arg.slice(equals + 1);
    else {
      value = argv[index + 1];
      index++;
    }
    if (value === undefined) throw new UsageError(`--${name} needs a value ${option.value}`, usage);
    const previous = parsed.values.get(name);
    if (previous && !option.repeatable) throw new UsageError(`--${name} may be given only once`, usage);
    parsed.values.set(name, [...(previous ?? []), value]);
  }
  if (parsed.switches.has("help")) return parsed;
  const required = argumentsSpec.filter((argument) => argument.required);
  if (parsed.positionals.length < required.length) {
    throw new UsageError(`missing argument ${required[parsed.positionals.length]!.name}`, usage);
  }
  if (parsed.positionals.length > argumentsSpec.length) {
    throw new UsageError(`too many arguments (expected ${argumentsSpec.length === 0 ? "none" : argumentsSpec.map((argument) => argument.name).join(" ")})`, usage);
  }
  return parsed;
}

/** The single value of an option, or undefined when absent. */
export function optionValue(args: ParsedArgs, name: string): string | undefined {
  return args.values.get(name)?.at(-1);
}

/**
 * The value of a whole-number option, kept as the digits given (they go on into a query
 * string), or undefined when absent; anything else, or a number outside [min, max], is a
 * usage error.
 */
export function integerOption(args: ParsedArgs, name: string, usage: string, min: number, max?: number): string | undefined {
  const value = optionValue(args, name);
  if (value === undefined) return undefined;
  if (!/^[0-9]+$/.test(value) || Number(value) < min || (max !== undefined && Number(value) > max)) {
    throw new UsageError(`--${name} must be ${max === undefined ? `an integer ≥ ${min}` : `an integer from ${min} to ${max}`}`, usage);
  }
  return value;
}
