import { describe, expect, test } from "bun:test";
import { safeNextPath } from "../../src/console/safe-next-path";
import { escapeHtml, html } from "../../src/console/html";

describe("safeNextPath", () => {
  test("keeps a path on this server, with its query", () => {
    for (const path of ["/console", "/console/account?ns=ns_1", "/oauth/authorize?client_id=brc_x&redirect_uri=https%3A%2F%2Fa.example%2Fcb", "/"]) {
      expect(safeNextPath(path)).toBe(path);
    }
  });

  test("refuses anything a browser could read as another host or a script, and falls back to the overview", () => {
    const refused = [
      "//evil.example",
      "///evil.example",
      "/\\evil.example",
      "\\\\evil.example",
      "https://evil.example",
      "javascript:alert(1)",
      "evil.example/path",
      "/\t/evil.example",
      "/\n/evil.example",
      "/ /evil.example",
      "/path\\..\\..\\evil",
      "/caf\u00e9",
      "",
      "x".repeat(5000),
    ];
    for (const value of refused) expect(safeNextPath(value)).toBe("/console");
    expect(safeNextPath(undefined)).toBe("/console");
    expect(safeNextPath(["/console/account"])).toBe("/console");
  });
});

describe("html", () => {
  test("escapes every interpolated string, in text and in attributes, and passes HTML made by html through", () => {
    const name = `"><script>alert('x')</script>&`;
    expect(html`<p title="${name}">${name}</p>`.text).toBe(`<p title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</p>`);
    expect(html`<ul>${["<a>", html`<li>ok</li>`]}</ul>`.text).toBe("<ul>&lt;a&gt;<li>ok</li></ul>");
    expect(html`${null}${undefined}${false}${0}`.text).toBe("0");
    expect(escapeHtml("`")).toBe("&#96;");
  });
});
