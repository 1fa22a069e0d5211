import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Every `.ts` file below `dir`, as absolute paths (the structure tests read src/ with it). */
export function sourceFiles(dir: string, into: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, into);
    else if (path.endsWith(".ts")) into.push(path);
  }
  return into;
}
