import type { z } from 'zod';
import { ModelError, ModelErrorKind, errorMessage } from '../errors.js';

/**
 * The model's answer is data from outside: whatever the SDK already parsed, it is validated here again with
 * the caller's zod schema before anyone sees it. Every failure is a retryable `bad-output` ModelError.
 */

export function badOutput(label: string, problem: string, cause?: unknown): ModelError {
  return new ModelError(
    `${label}: unusable answer: ${problem}`,
    { retryable: true, kind: ModelErrorKind.badOutput },
    cause === undefined ? undefined : { cause },
  );
}

/** The model declined to answer. Retryable: a second attempt often answers; after the retries, the caller decides. */
export function refusal(label: string, problem: string): ModelError {
  return new ModelError(`${label}: the model refused to answer: ${problem}`, {
    retryable: true,
    kind: ModelErrorKind.refusal,
  });
}

/**
 * The answer's text is longer than the request accepts (`maxAnswerChars`): it is never parsed, and never
 * retried (the same request tends to produce the same flood). Consolidation drops the answer and the
 * sessions of its batch wait.
 */
export class AnswerTooLargeError extends ModelError {
  constructor(
    label: string,
    /** Characters of the answer's text. */
    readonly answerChars: number,
    /** The most characters the request accepted. */
    readonly maxAnswerChars: number,
  ) {
    super(
      `${label}: the answer is ${answerChars.toLocaleString('en')} characters, more than the ${maxAnswerChars.toLocaleString('en')} accepted (limits.maxAnswerChars); it was dropped unread`,
      { retryable: false, kind: ModelErrorKind.answerTooLarge },
    );
  }
}

/** Throws AnswerTooLargeError when `text` is longer than `maxAnswerChars` (undefined: no limit). */
export function assertAnswerSize(label: string, text: string, maxAnswerChars: number | undefined): void {
  if (maxAnswerChars !== undefined && text.length > maxAnswerChars) {
    throw new AnswerTooLargeError(label, text.length, maxAnswerChars);
  }
}

/** The SDK's decoding of an answer's JSON: the JSON, or not JSON. */
export type DecodedJson = { readonly ok: true; readonly json: unknown } | { readonly ok: false };

/**
 * The parse both providers hand their SDK: it only decodes JSON and never throws, so the caller's schema
 * validates once. Text over `maxAnswerChars` is not decoded at all; the caller then fails with
 * AnswerTooLargeError.
 */
export function decodeJsonAnswer(content: string, maxAnswerChars: number | undefined): DecodedJson {
  if (maxAnswerChars !== undefined && content.length > maxAnswerChars) return { ok: false };
  try {
    return { ok: true, json: JSON.parse(content) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * The answer was cut off at `maxOutputTokens`. Not retryable: the identical request stops at the same place
 * again. The caller sends less per call (consolidation splits the batch) or raises `model.maxOutputTokens`.
 */
export class OutputLimitError extends ModelError {
  constructor(
    label: string,
    /** The limit the answer hit, in tokens. */
    readonly maxOutputTokens: number,
    cause?: unknown,
  ) {
    super(
      `${label}: the answer was cut off at the output limit of ${maxOutputTokens} tokens; send less per call or raise model.maxOutputTokens`,
      { retryable: false, kind: ModelErrorKind.outputLimit },
      cause === undefined ? undefined : { cause },
    );
  }
}

/** Validates a value against the schema; the error lists the first few issues with their paths. */
export function validateOutput<T>(
  schema: z.ZodType<T>,
  value: unknown,
  schemaName: string,
  label: string,
): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  const more = result.error.issues.length > 5 ? ` and ${result.error.issues.length - 5} more` : '';
  throw badOutput(label, `it does not match the ${schemaName} schema (${issues}${more})`, result.error);
}

/**
 * Parses JSON text from the model and validates it. Local models often wrap the JSON they were asked for:
 * reasoning models (DeepSeek-R1, Qwen3) put a `<think>…</think>` block first, and many put the JSON in a
 * ```` ```json ```` fence. Both wrappers are taken off first (see unwrapJsonText); anything else around the
 * JSON is still "not JSON".
 */
export function parseJsonOutput<T>(schema: z.ZodType<T>, text: string, schemaName: string, label: string): T {
  if (text.trim() === '') throw badOutput(label, 'the answer was empty');
  const unwrapped = unwrapJsonText(text);
  if (unwrapped.trim() === '') throw badOutput(label, `the answer held no JSON (${describeText(text)})`);
  let value: unknown;
  try {
    value = JSON.parse(unwrapped);
  } catch (error) {
    throw badOutput(label, `the answer is not JSON (${describeText(text)})`, error);
  }
  return validateOutput(schema, value, schemaName, label);
}

/** Leading reasoning blocks (`<think>`, `<thinking>`, `<reasoning>`), any number, each closed. */
const LEADING_REASONING = /^\s*(?:<(think|thinking|reasoning)>[\s\S]*?<\/\1>\s*)+/i;
/** A whole answer inside one Markdown code fence, with or without a language tag. */
const WHOLE_FENCE = /^\s*```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```\s*$/;

/**
 * The JSON text inside a model's answer: leading reasoning blocks removed, then one code fence that wraps the
 * whole rest. Text without either comes back unchanged.
 */
export function unwrapJsonText(text: string): string {
  const withoutReasoning = text.replace(LEADING_REASONING, '');
  const fenced = WHOLE_FENCE.exec(withoutReasoning);
  return fenced ? fenced[1]! : withoutReasoning;
}

function describeText(text: string): string {
  const start = text.slice(0, 80).replace(/\s+/g, ' ');
  return text.length > 80 ? `starts "${start}…"` : `"${start}"`;
}

/** A schema that no JSON schema describes (a z.date(), a z.custom()): a bug of the caller, never retried. */
export function unrepresentableSchema(label: string, schemaName: string, cause: unknown): ModelError {
  return new ModelError(
    `${label}: the ${schemaName} schema cannot be sent as a JSON schema (${errorMessage(cause)})`,
    { retryable: false, kind: ModelErrorKind.badRequest },
    { cause },
  );
}

/**
 * JSON schemas already converted, by zod schema and by provider flavour (and schema name where the flavour
 * depends on it). Converting walks the whole schema on every call (about half a millisecond for the
 * extraction schema, a tenth of a zero-latency run's CPU); the result depends only on the schema object,
 * which callers keep as a module constant, and zod schemas are immutable, so a cached JSON schema never goes
 * stale. The SDKs only read it to serialize the request. Weak keys: a schema built per call is not kept alive
 * by the cache. A conversion that throws is not cached (it throws again, as before).
 */
const JSON_SCHEMAS = new WeakMap<z.ZodType, Map<string, Record<string, unknown>>>();

export function cachedJsonSchema(
  schema: z.ZodType,
  flavour: string,
  convert: () => Record<string, unknown>,
): Record<string, unknown> {
  let byFlavour = JSON_SCHEMAS.get(schema);
  if (byFlavour === undefined) {
    byFlavour = new Map();
    JSON_SCHEMAS.set(schema, byFlavour);
  }
  let jsonSchema = byFlavour.get(flavour);
  if (jsonSchema === undefined) {
    jsonSchema = convert();
    byFlavour.set(flavour, jsonSchema);
  }
  return jsonSchema;
}

/**
 * The JSON schema with every local `$ref` (`#/$defs/…`) replaced by what it names, and `$defs` gone: the
 * converters file each primitive field under `$defs` (`{"$ref": "#/$defs/__schema1"}` for a plain string),
 * which costs bytes in every request and says nothing more. A schema whose definitions refer to themselves
 * (recursion) comes back unchanged.
 */
export function inlineLocalRefs(schema: Record<string, unknown>): Record<string, unknown> {
  const defs = schema.$defs;
  if (typeof defs !== 'object' || defs === null) return schema;
  const table = defs as Record<string, unknown>;
  let recursive = false;
  const resolve = (value: unknown, trail: readonly string[]): unknown => {
    if (Array.isArray(value)) return value.map((item) => resolve(item, trail));
    if (typeof value !== 'object' || value === null) return value;
    const record = value as Record<string, unknown>;
    const ref = record.$ref;
    if (typeof ref === 'string' && ref.startsWith('#/$defs/')) {
      const name = ref.slice('#/$defs/'.length);
      if (trail.includes(name) || !(name in table)) {
        recursive = true;
        return value;
      }
      const { $ref: _ref, ...rest } = record;
      const target = resolve(table[name], [...trail, name]) as Record<string, unknown>;
      return { ...target, ...resolveEntries(rest, trail) };
    }
    return resolveEntries(record, trail);
  };
  const resolveEntries = (
    record: Record<string, unknown>,
    trail: readonly string[],
  ): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(record)
        .filter(([key]) => key !== '$defs')
        .map(([key, item]) => [key, resolve(item, trail)]),
    );
  const inlined = resolve(schema, []) as Record<string, unknown>;
  return recursive ? schema : inlined;
}
