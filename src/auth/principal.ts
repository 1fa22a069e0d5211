/** Who is calling: resolved from a credential, shared by management and inference. */
export interface Principal {
  kind: "api_key" | "oauth_token";
  /** The credential's own id (api_keys.id / oauth_tokens.id). */
  id: string;
  accountId: string;
  /** Set for a namespace-baked credential; null for an account-wide one. */
  namespaceId: string | null;
  scopes: string[];
  /** Epoch ms, or null for a credential that does not expire. */
  expiresAt: number | null;
}
