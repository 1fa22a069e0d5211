import type { ProtocolId } from "../ir";
import { codecFor } from "../translation/codec-registry";
import { rewriteModelIds } from "../translation/rewrite-model-id";
import { frameStartBefore } from "../protocols/sse";

/**
 * Same-protocol streams: the upstream's SSE bytes go to the client as they are,
 * cut only at frame boundaries so that the one change we make — the model id —
 * never straddles two writes. Usage the codec asked for on the client's behalf is
 * dropped unless the client asked for it too (the codec's dropUnrequestedUsage).
 */
export class PassthroughFramer {
  private buffer = "";
  /** The buffer's last three characters: where a blank line split between two chunks begins. */
  private tail = "";
  /** From the usage chunk on, frames wait for flush() so the cost can go into it (the codec's addCharge). */
  private held = "";
  /** The codec's usageFrameAt, when the client asked for usage and its protocol shows the charge. */
  private readonly usageFrameAt: ((frames: string) => number) | undefined;
  private readonly dropUsage: ((frames: string) => string) | undefined;

  constructor(
    protocol: ProtocolId,
    private readonly requestedModel: string,
    clientAskedUsage: boolean,
  ) {
    const codec = codecFor(protocol);
    this.usageFrameAt = clientAskedUsage && codec.addCharge !== undefined ? codec.usageFrameAt : undefined;
    this.dropUsage = clientAskedUsage ? undefined : codec.dropUnrequestedUsage;
  }

  take(chunk: string): string {
    // Nearly always nothing is held over and the chunk ends on a frame's blank line: the
    // chunk is whole frames, and the bookkeeping below would only copy it around.
    if (this.buffer === "" && (chunk.endsWith("\n\n") || chunk.endsWith("\r\n\r\n"))) return this.forward(this.rewrite(chunk));
    // Only the chunk (and the buffer's last three characters, for a blank line split between
    // chunks) is searched for a frame's end: a chunk without one only lengthens the frame
    // being read, and a frame sent in many chunks costs its length once, not its length for
    // every chunk (a 16 MiB frame in 64 KiB chunks took over a second of this thread).
    const probe = this.tail === "" ? chunk : this.tail + chunk;
    const end = lastFrameEnd(probe);
    const cut = end === 0 ? 0 : this.buffer.length - this.tail.length + end;
    this.buffer += chunk;
    if (cut === 0) {
      this.tail = probe.length <= 3 ? probe : probe.slice(-3);
      return "";
    }
    const complete = this.rewrite(this.buffer.slice(0, cut));
    this.buffer = this.buffer.slice(cut);
    this.tail = this.buffer.length <= 3 ? this.buffer : this.buffer.slice(-3);
    return this.forward(complete);
  }

  /** Whole frames, rewritten: what goes to the client now (frames from the usage chunk on are held for flush()). */
  private forward(complete: string): string {
    if (this.usageFrameAt === undefined) return complete;
    if (this.held) {
      this.held += complete;
      return "";
    }
    const frameStart = this.usageFrameAt(complete);
    if (frameStart === -1) return complete;
    this.held = complete.slice(frameStart);
    return complete.slice(0, frameStart);
  }

  /** Everything not yet forwarded: held frames and any partial tail. */
  flush(): string {
    const rest = this.held + (this.buffer ? this.rewrite(this.buffer) : "");
    this.buffer = "";
    this.tail = "";
    this.held = "";
    return rest;
  }

  private rewrite(frames: string): string {
    const text = rewriteModelIds(frames, this.requestedModel);
    return this.dropUsage ? this.dropUsage(text) : text;
  }
}

/** Index just past the last blank line ("\n\n" or "\r\n\r\n"), 0 if none. */
function lastFrameEnd(text: string): number {
  // An upstream chunk nearly always ends on its frame's blank line: then the search back
  // through the whole chunk (for a "\r\n\r\n" that is not there) is not needed.
  if (text.endsWith("\n\n") || text.endsWith("\r\n\r\n")) return text.length;
  return frameStartBefore(text, text.length);
}
