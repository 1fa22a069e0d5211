import type { ClientPublisher } from "../identity/oauth/oauth-client";
import { html, type SafeHtml } from "./html";

/**
 * The line under a client's name on the device and consent pages: the built-in client is
 * marked first-party; any other names the account that registered it, so a look-alike
 * name alone never reads like the official client.
 */
export function clientPublisherLine(publisher: ClientPublisher): SafeHtml {
  if (publisher.firstParty) {
    return html`<p class="notice" id="client-publisher">First-party (Switchyard): the official client, published by this service.</p>`;
  }
  const owner = publisher.ownerEmail ?? "an account of this service";
  return html`<p class="hint" id="client-publisher">Third-party client by <strong>${owner}</strong>, not published by Switchyard. Continue only if you trust it.</p>`;
}
