/** Every scope the service knows. Space-separated on the wire, RFC 6749 §3.3. */
export const ALL_SCOPES = [
  "inference:invoke",
  "usage:read",
  "keys:read",
  "keys:write",
  "billing:read",
  "billing:write",
  "policy:read",
  "policy:write",
  "byok:read",
  "byok:write",
  "namespace:read",
  "namespace:write",
  "clients:read",
  "clients:write",
  "user:read",
  "user:write",
  "routing_preset:read",
  "routing_preset:write",
  "telemetry:write",
] as const;

const KNOWN = new Set<string>(ALL_SCOPES);
const RESOURCES = new Set(ALL_SCOPES.map((scope) => scope.split(":")[0]!));

/**
 * Scopes that control the account itself. A credential bound to one namespace never
 * carries them (minting them on a namespace-bound key is refused).
 */
export const CONTROL_PLANE_SCOPES: ReadonlySet<string> = new Set(["user:write", "clients:write", "namespace:write"]);

/** A control-plane scope, or a wildcard that would grant one (`user:*`). */
export function isControlPlaneScope(scope: string): boolean {
  if (CONTROL_PLANE_SCOPES.has(scope)) return true;
  if (!scope.endsWith(":*")) return false;
  const prefix = scope.slice(0, -1);
  for (const controlPlane of CONTROL_PLANE_SCOPES) if (controlPlane.startsWith(prefix)) return true;
  return false;
}

/** A scope name is valid if it is known, or a `<resource>:*` wildcard over a known resource. */
export function isValidScope(scope: string): boolean {
  if (KNOWN.has(scope)) return true;
  const [resource, action] = scope.split(":");
  return action === "*" && resource !== undefined && RESOURCES.has(resource);
}

/** Does a held scope grant the required one? `policy:*` grants `policy:read`. */
function grants(held: string, required: string): boolean {
  if (held === required) return true;
  if (!held.endsWith(":*")) return false;
  return required.startsWith(held.slice(0, -1));
}

export function hasScope(held: readonly string[], required: string): boolean {
  for (const scope of held) if (grants(scope, required)) return true;
  // A wildcard is also held by whoever holds every action of that resource.
  if (required.endsWith(":*")) {
    const prefix = required.slice(0, -1);
    const actions = ALL_SCOPES.filter((scope) => scope.startsWith(prefix));
    return actions.length > 0 && actions.every((scope) => hasScope(held, scope));
  }
  return false;
}

/**
 * RFC 6749 §3.3 "no upscaling": every requested scope must be granted by the
 * caller's effective scopes. Returns the first scope that is not, if any.
 */
export function firstScopeNotHeld(held: readonly string[], requested: readonly string[]): string | undefined {
  return requested.find((scope) => !hasScope(held, scope));
}
