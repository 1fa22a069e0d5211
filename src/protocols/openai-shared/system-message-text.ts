import type { IrMessage, IrWarning } from "../../ir";

/** A system message's text, as both OpenAI wires carry it: its text parts joined with "\n"; any other part is dropped. */
export function systemMessageText(message: IrMessage, path: string, warnings: IrWarning[]): string {
  const texts: string[] = [];
  message.content.forEach((part, index) => {
    if (part.type === "text") texts.push(part.text);
    else dropped(warnings, `${path}.content[${index}]`, `a ${part.type} part cannot appear in a system message`);
  });
  return texts.join("\n");
}

/** Content an OpenAI wire has no place for is left out, with a warning that says so. */
export function dropped(warnings: IrWarning[], field: string, message: string): void {
  warnings.push({ code: "dropped_content", field, message: `${message}; dropped` });
}
