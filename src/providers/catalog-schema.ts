import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { ValueErrorType, type ValueError } from "@sinclair/typebox/errors";
import { PROTOCOL_IDS } from "../ir/protocol-id";

/**
 * The catalog file's wire shape (docs/configuration.md "Catalog file"). Unknown fields are
 * rejected everywhere, so a misspelt optional field (`protocl`, `cache_reads`) fails at
 * startup instead of silently changing routing or prices. `description` texts double as
 * the "expected …" part of error messages.
 */

/** The capability vocabulary `GET /v1/models` publishes. */
export const CAPABILITIES = [
  "structured_outputs",
  "tools",
  "reasoning",
  "web_search",
  "logprobs",
  "image_input",
  "audio_input",
  "video_input",
  "file_input",
  "image_output",
  "audio_output",
] as const;

const Price = Type.Number({ minimum: 0, description: "a finite price ≥ 0 in USD per 1M tokens" });
const TokenLimit = Type.Integer({ minimum: 1, description: "a positive integer token count" });

const ContextTierSchema = Type.Object(
  {
    above_input_tokens: Type.Integer({ minimum: 0, description: "a non-negative integer token count" }),
    input: Type.Optional(Price),
    output: Type.Optional(Price),
    cache_read: Type.Optional(Price),
    cache_write: Type.Optional(Price),
  },
  { additionalProperties: false },
);

const PricingSchema = Type.Object(
  {
    input: Price,
    output: Price,
    cache_read: Type.Optional(Price),
    cache_write: Type.Optional(Price),
    context_tiers: Type.Optional(Type.Array(ContextTierSchema)),
  },
  { additionalProperties: false },
);

const ProtocolSchema = Type.Union(PROTOCOL_IDS.map((id) => Type.Literal(id)));

const ProviderId = Type.String({ pattern: "^[a-z0-9][a-z0-9_-]*$", description: "a provider id of lowercase letters, digits, '-' and '_'" });

const EndpointSchema = Type.Object(
  {
    provider: ProviderId,
    provider_model_id: Type.String({ minLength: 1, description: "a non-empty upstream model id" }),
    protocol: Type.Optional(ProtocolSchema),
    pricing: PricingSchema,
  },
  { additionalProperties: false },
);

const ProviderSchema = Type.Object(
  {
    id: ProviderId,
    name: Type.String({ minLength: 1, description: "a non-empty display name" }),
    description: Type.Optional(Type.String()),
    protocol: ProtocolSchema,
    base_url: Type.String({ pattern: "^https?://", description: "an http(s) URL" }),
    api_key_env: Type.String({ pattern: "^[A-Z_][A-Z0-9_]*$", description: "an environment variable name like ACME_API_KEY" }),
    byok: Type.Optional(Type.Boolean()),
    community: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const ModelSchema = Type.Object(
  {
    id: Type.String({
      // `<vendor>/<model>`: one slash, printable ASCII, no spaces. A leading `@` would read as a
      // routing preset; later `@`s are fine (test catalogs use `model@scenario`).
      pattern: "^[a-z0-9][a-z0-9._-]*/[A-Za-z0-9][!-.0-~]*$",
      description: 'a model id shaped "<vendor>/<model>"',
    }),
    name: Type.Optional(Type.String({ minLength: 1, description: "a non-empty display name" })),
    description: Type.Optional(Type.String()),
    open_weights: Type.Optional(Type.Boolean()),
    input_modalities: Type.Optional(Type.Array(Type.String({ pattern: "^[a-z][a-z_]*$", description: "a lowercase modality like \"text\"" }))),
    output_modalities: Type.Optional(Type.Array(Type.String({ pattern: "^[a-z][a-z_]*$", description: "a lowercase modality like \"text\"" }))),
    capabilities: Type.Optional(Type.Array(Type.Union(CAPABILITIES.map((c) => Type.Literal(c))))),
    max_input_tokens: Type.Optional(TokenLimit),
    max_output_tokens: Type.Optional(TokenLimit),
    // The most prompt tokens one image or one file (document, audio, video) can bill on
    // this model; admission reserves this much per item (src/admission/README.md).
    max_tokens_per_image: Type.Optional(TokenLimit),
    max_tokens_per_file: Type.Optional(TokenLimit),
    endpoints: Type.Array(EndpointSchema, { minItems: 1, description: "at least one endpoint" }),
  },
  { additionalProperties: false },
);

export const CatalogFileSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    providers: Type.Array(ProviderSchema),
    models: Type.Array(ModelSchema),
  },
  { additionalProperties: false },
);

export type CatalogFile = Static<typeof CatalogFileSchema>;
export type CatalogFileModel = Static<typeof ModelSchema>;
export type CatalogFilePricing = Static<typeof PricingSchema>;

const checker = TypeCompiler.Compile(CatalogFileSchema);

/** At most this many problems are reported at once; the rest are usually consequences. */
const MAX_ISSUES = 10;

/** Structural problems of `value`, each naming its entry; empty when the shape is valid. */
export function catalogShapeIssues(value: unknown): string[] {
  if (checker.Check(value)) return [];
  const issues: string[] = [];
  const seenPaths = new Set<string>();
  for (const error of checker.Errors(value)) {
    // One message per location: a union failure also reports each failed member.
    if (seenPaths.has(error.path)) continue;
    seenPaths.add(error.path);
    issues.push(`${describePath(value, error.path)}: ${describeError(error)}`);
    if (issues.length >= MAX_ISSUES) break;
  }
  return issues;
}

/**
 * `/models/3/endpoints/0/provider` → `models[3] ("acme/foo").endpoints[0].provider`: the
 * top-level entries are labelled with their id so the operator can find them.
 */
export function describePath(root: unknown, pointer: string): string {
  const segments = pointer.split("/").slice(1).map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  let text = "";
  let node: unknown = root;
  segments.forEach((segment, depth) => {
    const isIndex = Array.isArray(node) && /^\d+$/.test(segment);
    node = isRecord(node) || Array.isArray(node) ? (node as Record<string, unknown>)[segment] : undefined;
    if (isIndex) {
      text += `[${segment}]`;
      const id = depth === 1 && isRecord(node) ? node.id : undefined;
      if (typeof id === "string") text += ` (${JSON.stringify(id)})`;
    } else {
      text += text === "" ? segment : `.${segment}`;
    }
  });
  return text === "" ? "catalog" : text;
}

function describeError(error: ValueError): string {
  const got = describeValue(error.value);
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return "is required";
    case ValueErrorType.ObjectAdditionalProperties:
      return "is not a known field";
    case ValueErrorType.Union: {
      const choices = literalChoices(error.schema);
      if (choices) return `expected one of ${choices.map((c) => JSON.stringify(c)).join(", ")}, got ${got}`;
      break;
    }
    case ValueErrorType.Object:
      return `expected an object, got ${got}`;
    case ValueErrorType.Array:
      return `expected an array, got ${got}`;
    case ValueErrorType.Boolean:
      return `expected true or false, got ${got}`;
  }
  const description = error.schema.description;
  if (typeof description === "string") return `expected ${description}, got ${got}`;
  return `${error.message.charAt(0).toLowerCase()}${error.message.slice(1)}, got ${got}`;
}

function literalChoices(schema: TSchema): string[] | undefined {
  const members: unknown = schema.anyOf;
  if (!Array.isArray(members)) return undefined;
  const choices: string[] = [];
  for (const member of members) {
    if (!isRecord(member) || typeof member.const !== "string") return undefined;
    choices.push(member.const);
  }
  return choices;
}

function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
