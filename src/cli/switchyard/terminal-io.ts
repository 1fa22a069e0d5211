import { CliError } from "./cli-error";
import type { CommandIo } from "./command";

/**
 * Reads one line from a terminal in raw mode, echoing nothing, so a pasted key is not
 * left on screen or in a terminal recording. Ctrl-C cancels, Backspace edits.
 */
function readHiddenLine(prompt: string): Promise<string> {
  const stdin = process.stdin;
  // Raw mode before the prompt: a key pasted the instant the prompt shows must not be echoed.
  stdin.setRawMode(true);
  stdin.resume();
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let line = "";
    const finish = (outcome: () => void) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      outcome();
    };
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString("utf8")) {
        if (char === "\r" || char === "\n") return finish(() => resolve(line));
        if (char === "\u0003" || char === "\u0004") return finish(() => reject(new CliError("cancelled")));
        if (char === "\u007f" || char === "\b") line = line.slice(0, -1);
        else line += char;
      }
    };
    stdin.on("data", onData);
  });
}

/** The process's own streams. */
export function terminalIo(): CommandIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: () => Bun.stdin.text(),
    readHiddenLine,
    stdinIsTerminal: process.stdin.isTTY === true,
  };
}
