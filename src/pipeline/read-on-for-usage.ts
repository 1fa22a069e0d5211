import type { BodyReader } from "../routing/body-reader";
import type { StreamOutput } from "../translation/translation-types";

/** How long (unless the deps say otherwise), and how many characters, a refused answer's upstream is read on for its usage. */
export const READ_ON_MS = 5_000;
const READ_ON_CHARS = 1 << 20;

/** The translation session of the stream, as far as reading on needs it. */
export interface ReadOnSession {
  push(chunk: string): Promise<StreamOutput>;
  end(): Promise<StreamOutput>;
}

/**
 * An answer refused because it asks its client for an action the client's protocol cannot
 * express (a Responses `local_shell_call`, an unanswered `mcp_approval_request`) is complete
 * at the upstream: the action is the model's last output, and the provider bills all of it.
 * Its usage only comes with the stream's last event, so instead of hanging up the relay
 * reads on, bounded in time and size, and `note`s each output like any other; the record
 * then charges the output the provider reported rather than none. Nothing read here is
 * sent to the client. True when the upstream's stream ended within the bounds (the session
 * is then closed); false when it was cut, and the caller closes the session.
 */
export async function readOnForUsage(reader: BodyReader, session: ReadOnSession, note: (output: StreamOutput) => unknown, withinMs = READ_ON_MS): Promise<boolean> {
  let cut = false;
  const timer = setTimeout(() => {
    cut = true;
    reader.cancel();
  }, withinMs);
  let chars = 0;
  try {
    for (;;) {
      const chunk = await reader.next();
      if (cut) return false;
      if (chunk === undefined) break;
      note(await session.push(chunk));
      chars += chunk.length;
      if (chars > READ_ON_CHARS) return false;
    }
    note(await session.end());
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
