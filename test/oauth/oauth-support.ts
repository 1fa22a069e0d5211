import { expect } from "bun:test";
import { createHash } from "node:crypto";
import type { TestServer } from "../support/test-server";

export const CLI = "switchyard-cli";
export const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

export interface FormResponse {
  status: number;
  body: any;
  headers: Headers;
}

/** A form-encoded POST, as OAuth clients send it. */
export async function postForm(server: TestServer, path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<FormResponse> {
  const response = await fetch(server.url + path, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body, headers: response.headers };
}

export interface DeviceStart {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

export async function startDevice(server: TestServer, fields: Record<string, string> = {}): Promise<DeviceStart> {
  const response = await postForm(server, "/oauth/device_authorization", { client_id: CLI, ...fields });
  expect(response.status).toBe(200);
  return response.body;
}

export const pollDevice = (server: TestServer, deviceCode: string, clientId = CLI) =>
  postForm(server, "/oauth/token", { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId });

export async function decide(server: TestServer, token: string, userCode: string, namespaceId: string | undefined, approve = true) {
  return server.api("POST", "/oauth/device/decision", { token, body: { user_code: userCode, ...(namespaceId ? { namespace_id: namespaceId } : {}), approve } });
}

/** Device authorization through to tokens, approved with an account-wide credential. */
export async function deviceTokens(server: TestServer, approverToken: string, namespaceId: string, scope?: string) {
  const device = await startDevice(server, scope ? { scope } : {});
  const decided = await decide(server, approverToken, device.user_code, namespaceId);
  expect(decided.status).toBe(200);
  const tokens = await pollDevice(server, device.device_code);
  expect(tokens.status).toBe(200);
  return tokens.body as { access_token: string; refresh_token: string; scope: string; namespace_id: string; account_id: string; expires_in: number };
}

/** A PKCE pair: a verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}
