/** Who is calling: resolved from a credential, shared by management and inference. */
export interface Principal {
  kind: "api_key" | "oauth_token";
  /** The credential's own id: api_keys.id, or for an OAuth access token its grant's oauth_tokens.id. */
  id: string;
  accountId: string;
  /** Set for a namespace-baked credential; null for an account-wide one. */
  namespaceId: string | null;
  scopes: string[];
  /**
   * For an OAuth token issued to a registered client: that client's oauth_clients.id
   * (the `oauth_client` principal its policies bind to). For an API key minted through
   * such a token, that token's client. Null otherwise, and for the built-in
   * `switchyard-cli` client.
   */
  oauthClientId: string | null;
  /**
   * True for an OAuth token of the built-in first-party client (`switchyard-cli`): a
   * person signed in through the CLI. Set from the grant the server recorded when it
   * issued the token, never from anything a request carries. Keys such a token mints
   * belong to the account (docs/api/credentials.md "Keys people make are the account's"); absent means false.
   */
  firstPartySignIn?: boolean;
  /** Epoch ms, or null for a credential that does not expire. */
  expiresAt: number | null;
  /**
   * For a key minted by another credential: the keys above it, nearest first, and the
   * OAuth grant whose token minted the root of that chain. It dies with each of them and
   * answers to the policies bound to each. Absent or empty for a key nobody's key minted.
   */
  ancestorKeyIds?: readonly string[];
  ancestorGrantId?: string | null;
}

/**
 * What the management services read of whoever acts: the account, the namespace a
 * credential is bound to (null: account-wide) and the scopes it holds. Every Principal is
 * one; so is a person signed in to the console, who acts as the account itself and
 * presents no credential (no id, no kind, never an inference caller). A credential's id,
 * kind and ancestors come along where the caller is one.
 */
export type Caller = Pick<Principal, "accountId" | "namespaceId" | "scopes"> &
  Partial<Pick<Principal, "kind" | "id" | "oauthClientId" | "ancestorKeyIds" | "ancestorGrantId">>;
