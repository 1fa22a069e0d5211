import type { PrincipalRef } from "./effective-policy";

/** The credential a request presented: an API key or an OAuth token, by its id. */
export interface RequestCredential {
  kind: "api_key" | "oauth_token";
  id: string;
  /** For a derived key: the keys that minted it, nearest first, and the grant at the root. */
  ancestorKeyIds?: readonly string[];
  ancestorGrantId?: string | null;
}

/**
 * The principals whose policies govern a request: its namespace (the credential's own,
 * or the one it is attributed to), the API key or OAuth token it presented, and the
 * OAuth client that token was issued to. A key minted by another credential also answers
 * to every credential it was minted through (its parent key, theirs, the OAuth grant at
 * the root): their budgets count its spend, their guardrails and limits hold for it. The
 * effective policy is the composition of every enabled policy bound to any of them.
 */
export function requestPrincipals(namespaceId: string | null, credential: RequestCredential, oauthClientId: string | null = null): PrincipalRef[] {
  const principals: PrincipalRef[] = [];
  if (namespaceId !== null) principals.push({ type: "namespace", id: namespaceId });
  principals.push({ type: credential.kind, id: credential.id });
  for (const ancestor of credential.ancestorKeyIds ?? []) principals.push({ type: "api_key", id: ancestor });
  if (credential.ancestorGrantId) principals.push({ type: "oauth_token", id: credential.ancestorGrantId });
  if (oauthClientId !== null) principals.push({ type: "oauth_client", id: oauthClientId });
  return principals;
}
