import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";

export interface ScriptAsset {
  code: string;
  /** A digest of the code: the page names the script with it, so a long cache lifetime never serves a stale one. */
  version: string;
}

let built: Promise<ScriptAsset> | undefined;

/**
 * The BYOK page's sealing script: byok-seal-script.ts and the sealed box it uses (pure
 * JavaScript on @noble/*, the same code the server opens boxes with), bundled for the
 * browser once per process, on first use, and kept in memory. Served from this origin,
 * so the page's Content-Security-Policy allows scripts from 'self' only.
 */
export function byokSealScript(): Promise<ScriptAsset> {
  built ??= buildScript().catch((error: unknown) => {
    built = undefined;
    throw error;
  });
  return built;
}

async function buildScript(): Promise<ScriptAsset> {
  const result = await Bun.build({
    entrypoints: [fileURLToPath(new URL("./byok-seal-script.ts", import.meta.url))],
    target: "browser",
    format: "iife",
    minify: true,
  });
  const output = result.outputs[0];
  if (!result.success || !output) throw new Error(`the BYOK sealing script did not build: ${result.logs.map(String).join("; ")}`);
  const code = await output.text();
  return { code, version: createHash("sha256").update(code).digest("base64url").slice(0, 16) };
}
