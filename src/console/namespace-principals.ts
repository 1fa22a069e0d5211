import type { Namespace } from "../management/namespaces/namespace-service";
import { listKeys } from "../identity/api-key-service";
import { listClients } from "../management/oauth-clients/oauth-client-service";
import { listGrants } from "../identity/oauth-grant-service";
import type { Tenant } from "../identity/tenant";
import type { Services } from "../services";
import type { PrincipalRef, PrincipalType } from "../policy/effective-policy";

/** A principal a policy of the namespace can be bound to, with the words the page shows for it. */
export interface PrincipalChoice {
  principal: PrincipalRef;
  label: string;
}

/** The groups the bind form's list shows, in this order (the namespace itself comes first, alone). */
export const PRINCIPAL_GROUPS: readonly { type: Exclude<PrincipalType, "namespace">; label: string }[] = [
  { type: "api_key", label: "API keys" },
  { type: "oauth_token", label: "OAuth grants" },
  { type: "oauth_client", label: "OAuth clients" },
];

/**
 * The namespace's principals as the policies page names them: what a binding can be made
 * to (the namespace, its live keys, its live OAuth grants, its registered clients) and a
 * label for whatever an existing binding names, a revoked key or an ended grant included.
 */
export interface NamespacePrincipals {
  /** What the bind form offers. */
  choices: PrincipalChoice[];
  /** The words for a bound principal. */
  labelOf(principal: { principalType: string; principalId: string }): string;
}

/** The value of a principal in the bind form's `<select>`: `type:id` (ids never hold a colon). */
export function principalValue(principal: PrincipalRef): string {
  return `${principal.type}:${principal.id}`;
}

export async function loadNamespacePrincipals(services: Pick<Services, "db" | "credentials">, namespace: Namespace, tenant: Tenant): Promise<NamespacePrincipals> {
  const [keys, grants, clients] = await Promise.all([listKeys(services, tenant), listGrants(services, tenant), listClients(services, tenant)]);
  const now = Date.now();
  const labels = new Map<string, string>();
  const choices: PrincipalChoice[] = [];
  const add = (principal: PrincipalRef, label: string, live: boolean) => {
    labels.set(principalValue(principal), label);
    if (live) choices.push({ principal, label });
  };
  add({ type: "namespace", id: namespace.id }, `The whole namespace ${namespace.name}`, true);
  for (const key of keys) {
    const ended = key.revokedAt ? " (revoked)" : key.expiresAt && key.expiresAt.getTime() <= now ? " (expired)" : "";
    add({ type: "api_key", id: key.id }, `API key “${key.displayName}” (${key.id})${ended}`, ended === "");
  }
  for (const grant of grants) add({ type: "oauth_token", id: grant.id }, `OAuth grant to ${grant.clientName ?? grant.clientId} (${grant.id})`, true);
  for (const client of clients.data) add({ type: "oauth_client", id: client.id }, `OAuth client “${client.client_name}” (${client.client_id})`, true);

  return {
    choices,
    labelOf: ({ principalType: type, principalId: id }) => labels.get(`${type}:${id}`) ?? endedLabel(type, id),
  };
}

/**
 * A bound principal the namespace's lists no longer hold: an account-wide key (bindable
 * through the API by an account-wide caller), or a grant that ended.
 */
function endedLabel(type: string, id: string): string {
  switch (type) {
    case "api_key":
      return `Account-wide API key (${id})`;
    case "oauth_token":
      return `OAuth grant (${id}), revoked or expired`;
    case "oauth_client":
      return `OAuth client (${id})`;
    default:
      return `${type} ${id}`;
  }
}
