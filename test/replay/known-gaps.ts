/**
 * Cells that do not come out right today, each with the issue item it belongs to (issue 27,
 * "Real provider traffic"; "new" for what the replay found beyond the list) and what
 * goes wrong. replay.test.ts runs each listed aspect of each listed cell as `test.failing`:
 * when a fix makes it pass, that test fails until the cell is removed here. Every other
 * aspect of a listed cell is still held by the cell's own test.
 */
import type { ClientName } from "../policy-enforcement/enforcement-support";
import type { Aspect } from "./check-cell";

export interface KnownGap {
  item: "1" | "2" | "3" | "4" | "5" | "new";
  aspect: Aspect;
  /** What goes wrong, in every cell listed. */
  cause: string;
  /** Recording id × client protocol. */
  cells: ReadonlyArray<readonly [string, ClientName]>;
}

const CHAT = "openai-chat";
const RESPONSES = "openai-responses";
const MESSAGES = "anthropic-messages";
const GEMINI = "google-generate-content";

function cells(recordingId: string, ...clients: ClientName[]): Array<readonly [string, ClientName]> {
  return clients.map((client) => [recordingId, client] as const);
}

export const KNOWN_GAPS: readonly KnownGap[] = [];
