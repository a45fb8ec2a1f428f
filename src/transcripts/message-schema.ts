import { z } from 'zod';

/**
 * zod schemas of the messages that arrive in transcript files: Anthropic-shaped content blocks (also what
 * Claude Code writes) and OpenAI-shaped chat messages. Types are derived from the schemas.
 *
 * A content block of a type we do not know (a new server tool, a provider extension) is not an error: it
 * becomes `{ type: 'unknown', originalType }`, which the readers skip with a warning.
 */

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An ISO 8601 timestamp (anything `Date.parse` understands, e.g. `2026-11-20T10:00:00Z` or `2026-11-20`). */
export const Timestamp = z
  .string()
  .refine((value) => !Number.isNaN(Date.parse(value)), { message: 'expected an ISO 8601 date or timestamp' });

const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
const ThinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string() });
const RedactedThinkingBlock = z.looseObject({ type: z.literal('redacted_thinking') });
const ImageBlock = z.looseObject({ type: z.literal('image') });
/** OpenAI content parts that carry no text we keep. */
const ImageUrlPart = z.looseObject({ type: z.literal('image_url') });
const RefusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const ToolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().optional(),
  name: z.string(),
  input: z.unknown().optional(),
});

/** What a tool result may hold: a string, or text and image blocks (others skipped). */
const ToolResultInnerBlock = z.looseObject({ type: z.string(), text: z.string().optional() });
const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().optional(),
  content: z.union([z.string(), z.array(ToolResultInnerBlock), z.null()]).optional(),
  is_error: z.boolean().nullable().optional(),
});
const UnknownBlock = z.object({ type: z.literal('unknown'), originalType: z.string() });

const KNOWN_BLOCK_TYPES: ReadonlySet<string> = new Set([
  'text',
  'thinking',
  'redacted_thinking',
  'image',
  'image_url',
  'refusal',
  'tool_use',
  'tool_result',
]);

/** One content block of a message, known or not. */
export const ContentBlock = z.preprocess(
  (value) =>
    isRecord(value) && typeof value.type === 'string' && !KNOWN_BLOCK_TYPES.has(value.type)
      ? { type: 'unknown', originalType: value.type }
      : value,
  z.discriminatedUnion('type', [
    TextBlock,
    ThinkingBlock,
    RedactedThinkingBlock,
    ImageBlock,
    ImageUrlPart,
    RefusalPart,
    ToolUseBlock,
    ToolResultBlock,
    UnknownBlock,
  ]),
);
export type ContentBlock = z.infer<typeof ContentBlock>;

/** Message content: a plain string or a list of blocks. OpenAI allows `null` next to `tool_calls`. */
export const MessageContent = z.union([z.string(), z.array(ContentBlock), z.null()]);
export type MessageContent = z.infer<typeof MessageContent>;

/** OpenAI `tool_calls[]` entry; `arguments` is a JSON string (kept raw when it does not parse). */
export const OpenAiToolCall = z.looseObject({
  id: z.string().optional(),
  type: z.string().optional(),
  function: z.looseObject({ name: z.string(), arguments: z.string().optional() }),
});
export type OpenAiToolCall = z.infer<typeof OpenAiToolCall>;

/**
 * A message of a native transcript: Anthropic-shaped (`role` user/assistant, `content` string or blocks)
 * or OpenAI-shaped (`role` system/user/assistant/tool, `tool_calls`, `tool_call_id`). Both read the same way.
 */
export const NativeMessage = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: MessageContent.optional(),
  tool_calls: z.array(OpenAiToolCall).nullable().optional(),
  tool_call_id: z.string().optional(),
  /** When the message was written (ISO 8601). */
  ts: Timestamp.optional(),
});
export type NativeMessage = z.infer<typeof NativeMessage>;

/**
 * A session id as it may appear in a file: it names files and ledger entries, so no path separators,
 * no leading dot, at most 200 characters.
 */
export const SessionId = z
  .string()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,199}$/,
    'a session id is 1–200 letters, digits, ".", "_", ":", "@", "+" or "-"',
  );

/** The native transcript file, `<sessionsDir>/<id>.json`. Messages are validated one by one (see native-reader). */
export const NativeFile = z.looseObject({
  id: SessionId.optional(),
  startedAt: Timestamp.optional(),
  endedAt: Timestamp.nullable().optional(),
  agent: z.string().nullable().optional(),
  messages: z.array(z.unknown()),
});
export type NativeFile = z.infer<typeof NativeFile>;

/**
 * One line describing the first problem zod found: `messages.1.content.0.name: Invalid input: expected
 * string`. For a union, the branch that got furthest (longest path) is the one described.
 */
export function describeZodError(error: z.ZodError, prefix: readonly PropertyKey[] = []): string {
  let issue: z.core.$ZodIssue | undefined = error.issues[0];
  let path: PropertyKey[] = [...prefix];
  while (issue?.code === 'invalid_union' && issue.errors.length > 0) {
    path = [...path, ...issue.path];
    const candidates = issue.errors.map((branch) => branch[0]).filter((candidate) => candidate !== undefined);
    candidates.sort((left, right) => right.path.length - left.path.length);
    issue = candidates[0];
  }
  if (issue === undefined) return 'wrong shape';
  const where = [...path, ...issue.path].map(String).join('.');
  return `${where === '' ? '(top level)' : where}: ${issue.message}`;
}
