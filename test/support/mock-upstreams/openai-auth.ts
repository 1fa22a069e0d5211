/**
 * OpenAI credentials (chat and Responses): `Authorization: Bearer <key>`.
 * https://platform.openai.com/docs/api-reference/authentication
 */
import { bearerToken } from "./mock-protocol";
import type { MockError } from "./vendor-errors";

export function rejectOpenaiRequest(headers: Headers, apiKey: string | undefined): MockError | undefined {
  if (apiKey === undefined) return undefined;
  const token = bearerToken(headers);
  if (token === undefined) {
    return {
      status: 401,
      openaiCode: null,
      message:
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    };
  }
  return token === apiKey ? undefined : { status: 401 };
}
