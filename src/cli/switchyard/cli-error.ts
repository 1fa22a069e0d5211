/**
 * The two ways a command fails, by exit code (docs/console-and-cli.md "Command-line client"):
 * 1 when the server refuses or the user is not signed in, 2 when the command line
 * itself is wrong. Messages never carry a token or a key.
 */
export class CliError extends Error {
  readonly exitCode = 1;
  constructor(
    message: string,
    /** A next step printed after the message, e.g. the login command that adds a scope. */
    readonly hint?: string,
    /** The HTTP status when the server refused; undefined when it was never reached. */
    readonly status?: number,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(
    message: string,
    /** The usage text of the command that was misused, printed after the message. */
    readonly usage: string,
  ) {
    super(message);
    this.name = "UsageError";
  }
}

export const LOGIN_HINT = "run `switchyard login` to sign in";

export function notSignedIn(reason = "not signed in"): CliError {
  return new CliError(reason, LOGIN_HINT);
}
