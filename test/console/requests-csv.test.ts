import { describe, expect, test } from "bun:test";
import { csvCell } from "../../src/console/requests-csv";

/** The text a spreadsheet reads from one cell: the RFC 4180 quoting undone. */
function cellText(cell: string): string {
  return cell.startsWith('"') ? cell.slice(1, -1).replaceAll('""', '"') : cell;
}

describe("csvCell against CSV injection", () => {
  test("a formula behind leading whitespace, line breaks or invisible characters is prefixed with a quote all the same", () => {
    const hidden = [
      " ", "  ", "\u00A0", "\u3000", "\u2003", "\n", "\r\n", "\u2028", "\v", "\f",
      "\u200B", "\u200C", "\u200D", "\uFEFF", "\u2060", "\u00AD", "\u202E", "\u2066", "\u180E", "\u034F", "\u3164", "\uFE0F",
      "\u0000", "\u0085", "\u200B \u200D\n",
    ];
    for (const lead of hidden) {
      for (const formula of ['=HYPERLINK("https://evil.example","x")', "+1+1", "-1+cmd|' /C calc'!A0", "@SUM(A1:A9)"]) {
        const input = `${lead}${formula}`;
        expect({ input, text: cellText(csvCell(input)) }).toEqual({ input, text: `'${input}` });
      }
    }
  });

  test("a tab or carriage return at the start, or after invisible characters, is prefixed too", () => {
    for (const input of ["\t=1", "\r=1", "\tplain", "\rplain", "\u200B\tplain", " \rplain"]) {
      expect({ input, text: cellText(csvCell(input)) }).toEqual({ input, text: `'${input}` });
    }
  });

  test("text whose first visible character is not a trigger is left as it is, and numbers stay numbers", () => {
    for (const input of ["plain", "gpt-4o", "a=b", "x+1", " plain", "\u200Bplain", "\n model", "openai/gpt-5", "—"]) {
      expect({ input, text: cellText(csvCell(input)) }).toEqual({ input, text: input });
    }
    expect(csvCell(-5)).toBe("-5");
    expect(csvCell(-0.25)).toBe("-0.25");
    expect(csvCell(true)).toBe("true");
    expect(csvCell(null)).toBe("");
  });

  test("a prefixed cell with a comma, quote or line break is still quoted", () => {
    expect(csvCell('\u200B=HYPERLINK("a","b")')).toBe('"\'\u200B=HYPERLINK(""a"",""b"")"');
    expect(csvCell("\n=1,2")).toBe('"\'\n=1,2"');
  });
});
