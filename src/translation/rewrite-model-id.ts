/**
 * Same-protocol passthrough changes exactly one thing in the upstream's bytes: the
 * `"model": "<upstream slug>"` values become the model id the client asked for.
 * A plain scan, no regex and no JSON round trip, so everything else stays byte for
 * byte. Model ids contain no quotes or backslashes, and a `"model":"` inside a JSON
 * string would be escaped (`\"model\"`), so it never matches.
 */
export function rewriteModelIds(text: string, requestedModel: string): string {
  let index = text.indexOf('"model"');
  if (index === -1) return text;
  let out = "";
  let from = 0;
  while (index !== -1) {
    let cursor = index + 7;
    while (text.charCodeAt(cursor) === 32) cursor++;
    if (text.charCodeAt(cursor) === 58 /* : */) {
      cursor++;
      while (text.charCodeAt(cursor) === 32) cursor++;
      if (text.charCodeAt(cursor) === 34 /* " */) {
        const close = text.indexOf('"', cursor + 1);
        if (close === -1) break;
        out += text.slice(from, cursor + 1) + requestedModel;
        from = close;
      }
    }
    index = text.indexOf('"model"', cursor);
  }
  return out + text.slice(from);
}
