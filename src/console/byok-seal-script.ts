/**
 * Runs in the browser on the BYOK page (bundled by byok-seal-asset.ts): seals the typed
 * provider key to the service's BYOK public key with a sealed box, fills the form's hidden
 * fields with the box, the KEK id and a short prefix, empties the key field and submits.
 * The key field has no `name`, so the key itself is never part of what the form sends;
 * without this script the submit button stays disabled.
 */
import { sealedBoxSeal } from "../byok/sealed-box";

// The project's TypeScript has no DOM library: the few DOM members used here, declared locally.
interface Field {
  value: string;
  disabled: boolean;
  textContent: string | null;
}
interface SealForm extends Field {
  submit(): void;
  addEventListener(type: "submit", listener: (event: { preventDefault(): void }) => void): void;
  getAttribute(name: string): string | null;
}
declare const document: { getElementById(id: string): unknown };
declare function btoa(data: string): string;
declare function atob(data: string): string;

const byId = <T>(id: string): T => {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`the BYOK form has no #${id}`);
  return element as T;
};

const toBase64 = (bytes: Uint8Array): string => btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(""));
const fromBase64 = (text: string): Uint8Array => Uint8Array.from(atob(text), (char) => char.charCodeAt(0));

/** What the key list shows of the key: a few leading characters, never more than a quarter of it. */
const prefixOf = (key: string): string => key.slice(0, Math.min(8, Math.floor(key.length / 4)));

function start(): void {
  const form = byId<SealForm>("byok-form");
  const key = byId<Field>("byok-key");
  const button = byId<Field>("byok-submit");
  const status = byId<Field>("byok-status");
  const hidden = { kekId: byId<Field>("byok-kek-id"), box: byId<Field>("byok-ciphertext"), prefix: byId<Field>("byok-key-prefix") };
  button.disabled = false;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const typed = key.value.trim();
    if (typed === "") {
      status.textContent = "Type or paste the provider's API key first.";
      return;
    }
    button.disabled = true;
    status.textContent = "Sealing the key in this page…";
    fetch(form.getAttribute("data-pubkey-url") ?? "", { cache: "no-store", credentials: "omit" })
      .then(async (response) => {
        if (!response.ok) throw new Error(`the public key could not be fetched (HTTP ${response.status})`);
        const { kek_id, public_key } = (await response.json()) as { kek_id: string; public_key: string };
        const message = new TextEncoder().encode(typed);
        hidden.box.value = toBase64(sealedBoxSeal(message, fromBase64(public_key)));
        message.fill(0);
        hidden.kekId.value = kek_id;
        hidden.prefix.value = prefixOf(typed);
        key.value = "";
        status.textContent = "Sealed. Saving…";
        form.submit();
      })
      .catch((error: unknown) => {
        button.disabled = false;
        status.textContent = `The key was not saved: ${error instanceof Error ? error.message : String(error)}. Try again.`;
      });
  });
}

start();
