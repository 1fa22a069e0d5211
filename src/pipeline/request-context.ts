import type { Principal } from "../auth/principal";
import type { ProtocolId } from "../ir";

/** What an inference route hands the pipeline. */
export interface InferenceInput {
  protocol: ProtocolId;
  request: Request;
  /** Generate-content puts model and stream in the path; they are merged into the body. */
  injected?: Record<string, unknown>;
}

/** One authenticated inference request, as every stage after `authenticate` sees it. */
export interface RequestContext {
  /** The client-visible id (x-request-id). */
  requestId: string;
  /** The protocol the client speaks: its answers and errors are rendered in it. */
  protocol: ProtocolId;
  principal: Principal;
  /** The client's request: its headers go upstream, its signal says a stream's client left. */
  request: Request;
}
