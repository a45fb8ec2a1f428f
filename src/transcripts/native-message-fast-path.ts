import type { NativeMessage } from './message-schema.js';

/**
 * A hand-written check of the common native message shapes, in front of the zod schema `NativeMessage`.
 *
 * zod costs several times `JSON.parse` on a transcript (every message, every block, every field), and almost
 * every message is plain: a known role, string content or known blocks, a valid `ts`. This check accepts
 * only values the schema accepts unchanged, and returns undefined for anything else (an unknown block type,
 * which the schema rewrites, or any doubt), so the caller then runs the schema, whose answer and error
 * messages stay the reference. Pure.
 */

type Loose = Record<string, unknown>;

const ROLES: ReadonlySet<unknown> = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

function isRecord(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOptionalString(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

function isToolResultContent(content: unknown): boolean {
  if (content === undefined || content === null || typeof content === 'string') return true;
  if (!Array.isArray(content)) return false;
  for (const inner of content as unknown[]) {
    if (!isRecord(inner) || typeof inner.type !== 'string' || !isOptionalString(inner.text)) return false;
  }
  return true;
}

/** True when the block is of a known type with the fields the schema requires. */
function isPlainBlock(block: unknown): boolean {
  if (!isRecord(block)) return false;
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string';
    case 'thinking':
      return typeof block.thinking === 'string';
    case 'refusal':
      return typeof block.refusal === 'string';
    case 'redacted_thinking':
    case 'image':
    case 'image_url':
      return true;
    case 'tool_use':
      return typeof block.name === 'string' && isOptionalString(block.id);
    case 'tool_result':
      return (
        isOptionalString(block.tool_use_id) &&
        (block.is_error === undefined || block.is_error === null || typeof block.is_error === 'boolean') &&
        isToolResultContent(block.content)
      );
    default:
      return false;
  }
}

function isPlainToolCall(call: unknown): boolean {
  if (!isRecord(call) || !isOptionalString(call.id) || !isOptionalString(call.type)) return false;
  const fn = call.function;
  return isRecord(fn) && typeof fn.name === 'string' && isOptionalString(fn.arguments);
}

/**
 * The message as the schema would return it, when it is of a plain shape; undefined when the schema must
 * decide (it may still accept it).
 */
export function plainNativeMessage(value: unknown): NativeMessage | undefined {
  if (!isRecord(value) || !ROLES.has(value.role)) return undefined;
  const { content, tool_calls: toolCalls, tool_call_id: toolCallId, ts } = value;
  if (content !== undefined && content !== null && typeof content !== 'string') {
    if (!Array.isArray(content)) return undefined;
    for (const block of content as unknown[]) if (!isPlainBlock(block)) return undefined;
  }
  if (toolCalls !== undefined && toolCalls !== null) {
    if (!Array.isArray(toolCalls)) return undefined;
    for (const call of toolCalls as unknown[]) if (!isPlainToolCall(call)) return undefined;
  }
  if (!isOptionalString(toolCallId)) return undefined;
  if (ts !== undefined && (typeof ts !== 'string' || Number.isNaN(Date.parse(ts)))) return undefined;
  return value as NativeMessage;
}
