#!/usr/bin/env bun
/**
 * `switchyard`, the command-line client of a Switchyard server: sign in with the OAuth
 * device flow, then manage API keys, BYOK keys and policies and read usage.
 * `switchyard --help` lists the commands; docs/console-and-cli.md "Command-line client" has the full description.
 */
import { runCli } from "./switchyard/run-cli";
import { terminalIo } from "./switchyard/terminal-io";

process.exitCode = await runCli(process.argv.slice(2), process.env, terminalIo());
