import { describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { anchors, documentationFiles, headingSlug, links, readRepositoryFile, ROOT } from "./markdown";

/**
 * Every relative link in README.md and docs/ reaches a file of the repository, and every
 * `#anchor` names a heading of the file it points into (GitHub's slug of the heading).
 */
describe("documentation links", () => {
  for (const file of documentationFiles()) {
    test(`every relative link and anchor in ${file} resolves`, () => {
      const broken: string[] = [];
      for (const { target, line } of links(readRepositoryFile(file))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …
        const [path, anchor] = target.split("#", 2) as [string, string | undefined];
        const resolved = path === "" ? file : normalize(join(dirname(file), decodeURIComponent(path)));
        if (resolved.startsWith("..") || !existsSync(join(ROOT, resolved))) {
          broken.push(`${file}:${line} ${target}: no such file`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!resolved.endsWith(".md") || statSync(join(ROOT, resolved)).isDirectory()) {
          broken.push(`${file}:${line} ${target}: an anchor into a file that is not Markdown`);
          continue;
        }
        if (!anchors(readRepositoryFile(resolved)).has(anchor)) broken.push(`${file}:${line} ${target}: no heading with that anchor in ${resolved}`);
      }
      expect(broken).toEqual([]);
    });
  }

  test("the slug rule matches GitHub's on the headings this documentation links to (a check of the check)", () => {
    expect(headingSlug("Rotating ADMIN_TOKEN and BYOK_MASTER_KEY without downtime")).toBe("rotating-admin_token-and-byok_master_key-without-downtime");
    expect(headingSlug("The overhead, live (Server-Timing)")).toBe("the-overhead-live-server-timing");
    expect(headingSlug("Quickstart (five minutes)")).toBe("quickstart-five-minutes");
    expect(headingSlug("`GET /ready`: readiness")).toBe("get-ready-readiness");
    expect([...anchors("# A\n## A\n```\n# not a heading\n```\n")]).toEqual(["a", "a-1"]);
  });
});
