import { irError, type IrError, type IrWarning, type ProtocolId } from "../ir";

/**
 * An upstream answer that asks the client to take an action its protocol cannot express
 * (a Responses `local_shell_call`, `mcp_approval_request`, `computer_call`, …): refused as
 * the upstream's invalid answer for this client, never relayed as an empty success. The
 * message says how to get it: call the model through the upstream's own API.
 */
export function clientActionRefusal(action: string, client: ProtocolId): IrError {
  return irError(
    "upstream_invalid_response",
    `the upstream answered with a ${action}, an action the client must take that ${client} cannot express; call this model through the OpenAI Responses API (POST /v1/responses) to receive it`,
  );
}

/** The record's note of it, with the other things a translation could not carry. */
export function clientActionWarning(action: string): IrWarning {
  return { code: "unsupported_client_action", field: `output.${action}`, message: `the upstream asked the client to take a ${action}; the answer was refused` };
}
