/** The value of one cookie in a request's Cookie header, or undefined. */
export function readCookie(request: Request, name: string): string | undefined {
  const header = request.headers.get("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const separator = part.indexOf("=");
    if (separator === -1) continue;
    if (part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return undefined;
}

/**
 * A Set-Cookie value: HttpOnly (no script reads it), SameSite=Lax, Path=/, and Secure
 * when the server's public URL is https. `maxAgeSecs` 0 deletes the cookie.
 */
export function setCookie(name: string, value: string, options: { maxAgeSecs: number; secure: boolean }): string {
  return `${name}=${value}; Path=/; Max-Age=${options.maxAgeSecs}; HttpOnly; SameSite=Lax${options.secure ? "; Secure" : ""}`;
}
