import { badRequest } from "../errors/api-error";
import { contentPatternProblem } from "../policy/content-pattern";
import { MAX_MODELS_PER_LIST, validatePolicySpec, type ContentPatternSpec, type GuardrailSpec } from "../policy/policy-spec";
import { field } from "./console-context";
import { oneLineField, optionalCountField, textAreaField } from "./form-input";
import { PATTERN_ROWS } from "./guardrail-form";

/** A model list typed one id per line: blank lines dropped, each id once; empty is no list. */
function modelList(body: unknown, name: string, label: string): string[] | null {
  const text = textAreaField(body, name, label, MAX_MODELS_PER_LIST * 257);
  const models = [...new Set(text.split("\n").map((line) => line.trim()).filter((line) => line !== ""))];
  return models.length === 0 ? null : models;
}

/**
 * The filled content-pattern rows. A row with both fields empty is skipped; a half-filled
 * row is refused. Each expression is checked here by the same rule the spec validation
 * applies, so the message can name the row the person typed it in.
 */
function contentPatterns(body: unknown): ContentPatternSpec[] {
  const patterns: ContentPatternSpec[] = [];
  for (let row = 1; row <= PATTERN_ROWS; row++) {
    const label = `Content pattern ${row}`;
    const name = oneLineField(body, `pattern-${row}-name`, `${label}: the name`, { max: 100 });
    const pattern = field(body, `pattern-${row}-regex`);
    if (name === "" && pattern.trim() === "") continue;
    if (name === "") throw badRequest(`${label} needs a name.`);
    if (pattern === "") throw badRequest(`${label} (“${name}”) needs a regular expression.`);
    // Written as typed (spaces count), but one line: a NUL would not even reach the database.
    if (/[\u0000-\u001f\u007f]/.test(pattern)) throw badRequest(`${label} (“${name}”): the regular expression must be one line of text (write \\n or \\t for those characters).`);
    const problem = contentPatternProblem(pattern);
    if (problem) throw badRequest(`${label} (“${name}”): the regular expression ${problem}.`);
    const action = field(body, `pattern-${row}-action`);
    if (action !== "block" && action !== "redact") throw badRequest(`${label} (“${name}”): choose block or redact.`);
    patterns.push({ name, pattern, action });
  }
  return patterns;
}

/**
 * The guardrail a console form describes, validated by the same `validatePolicySpec` as
 * the JSON API's create route (its messages, its refusal of patterns that can backtrack
 * exponentially). Only the rules set are stored: an empty list, a checked streaming box
 * or "no rule" leaves the field out, as a JSON caller would.
 */
export function guardrailFromForm(body: unknown): { name: string; spec: GuardrailSpec } {
  const name = oneLineField(body, "name", "Name", { max: 200, required: true });
  const spec: Record<string, unknown> = {};
  const allow = modelList(body, "model_allow", "Allowed models");
  if (allow) spec.model_allow = allow;
  const deny = modelList(body, "model_deny", "Denied models");
  if (deny) spec.model_deny = deny;
  if (field(body, "allow_streaming") === "") spec.allow_streaming = false;
  const maxTokens = optionalCountField(body, "max_request_tokens", "Most tokens per request");
  if (maxTokens !== null) spec.max_request_tokens = maxTokens;
  const byok = field(body, "byok");
  if (byok !== "") spec.byok = byok;
  const patterns = contentPatterns(body);
  if (patterns.length > 0) spec.content_patterns = patterns;
  if (Object.keys(spec).length === 0) throw badRequest("Set at least one rule: a guardrail without rules limits nothing.");
  return { name, spec: validatePolicySpec("guardrail", spec) };
}
