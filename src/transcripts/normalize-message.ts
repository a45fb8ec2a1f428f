import type { MessagePart, MessageRole } from './types.js';
import type { ContentBlock, MessageContent, NativeMessage, OpenAiToolCall } from './message-schema.js';

/**
 * Pure conversion of provider-shaped message content into the normalized `MessagePart`s.
 * Warnings (skipped blocks, tool arguments that are not JSON) are pushed to the `warnings` array given.
 */

/** Placeholder text for an image, in messages and tool results. */
export const IMAGE_PLACEHOLDER = '[image]';

/**
 * How much of each part a reader keeps, in characters (UTF-16 code units, as `String.length` counts). A part
 * over its cap keeps what the digest can show and a marker of the rest, `[... 5120 chars not kept]`, so a
 * transcript with megabyte tool outputs or pastes costs memory for what reaches the model, not for the file.
 * The marker is ASCII on purpose: one non-Latin-1 character would make V8 store the whole string at two bytes
 * a character. `Infinity` keeps a part whole.
 */
export interface PartCaps {
  /**
   * Characters kept of one text or thinking part: its first 4/5 and last 1/5, the marker between them.
   * Default 32,000: twice the digest's user text (16,000, cut the same way), so the digest shows the same
   * head and tail as from the whole text.
   */
  readonly textChars: number;
  /**
   * Characters kept of one tool result, from its head. Default 2,000: the digest looks at most at
   * max(512, 3 × `limits.toolResultChars`) characters of a result, 600 by default; callers that digest with
   * `toolResultChars` above 666 should raise it to that window.
   */
  readonly toolResultChars: number;
  /**
   * Characters kept of each string inside a tool call's input (the object and its other fields stay), from
   * its head. Default 2,000: the digest summarizes a call from 360 characters of one field.
   */
  readonly toolInputChars: number;
  /**
   * Content blocks (and OpenAI `tool_calls`) kept of one message, in file order; the rest are dropped with
   * a warning, before they are validated or converted. Default 1,000: real messages hold a few blocks, a
   * turn of parallel tool calls some tens, so only a file built to exhaust memory reaches it. Without it a
   * message of 2 million one-letter blocks (a 54 MB file) cost 450 MB (native) and 870 MB (Claude Code) at
   * peak and kept 2 million parts: memory followed the file's shape, not its bytes.
   */
  readonly blocksPerMessage: number;
}

/** The caps readers apply when the caller names none. */
export const DEFAULT_PART_CAPS: PartCaps = {
  textChars: 32_000,
  toolResultChars: 2_000,
  toolInputChars: 2_000,
  blocksPerMessage: 1_000,
};

/**
 * Cuts the `content` and `tool_calls` arrays of a raw (just parsed, not yet validated) message in place, before
 * validation copies them, so that together they hold at most `limit` entries (content first, as they become
 * parts); returns how many were dropped. Anything not an object with such arrays is left as it is.
 */
export function dropBlocksOverLimit(message: unknown, limit: number): number {
  if (typeof message !== 'object' || message === null) return 0;
  const record = message as Record<string, unknown>;
  let room = Math.max(0, Math.floor(limit));
  let dropped = 0;
  for (const key of ['content', 'tool_calls'] as const) {
    const value = record[key];
    if (!Array.isArray(value)) continue;
    if (value.length > room) {
      dropped += value.length - room;
      value.length = room;
    }
    room -= value.length;
  }
  return dropped;
}

/** The warning of a message whose blocks were dropped by `dropBlocksOverLimit`. */
export function blocksDroppedWarning(where: string, dropped: number, limit: number): string {
  return `${where}: ${dropped} content block(s) over the limit of ${limit} a message not kept`;
}

function notKept(count: number): string {
  return `[... ${count} chars not kept]`;
}

/**
 * The pieces joined into one flat string. `slice` and `+` make strings that point into their source, which
 * would keep a whole part (a megabyte tool output) alive for the few characters kept; `Array.prototype.join`
 * of two or more strings copies them into a new string of its own (exact, lone surrogates included), at a
 * tenth of the cost of the `JSON.parse(JSON.stringify(...))` round trip.
 */
function joinedCopy(pieces: readonly string[]): string {
  return pieces.join('');
}

/** `text` cut to its first `limit` characters and a marker of how many were dropped. */
export function capHead(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const head = Math.max(0, Math.floor(limit));
  return joinedCopy([text.slice(0, head), ' ', notKept(text.length - head)]);
}

/** `text` cut to its first 4/5 and last 1/5 of `limit` characters, with a marker between them. */
export function capHeadAndTail(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const kept = Math.max(0, Math.floor(limit));
  const tail = Math.floor(kept / 5);
  const head = kept - tail;
  return joinedCopy([
    text.slice(0, head),
    ' ',
    notKept(text.length - kept),
    ' ',
    text.slice(text.length - tail),
  ]);
}

/** True when some string in `value` is longer than `limit` (nothing to copy otherwise). */
function hasStringOver(value: unknown, limit: number): boolean {
  if (typeof value === 'string') return value.length > limit;
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) if (hasStringOver(item, limit)) return true;
    return false;
  }
  for (const key in value) {
    if (Object.hasOwn(value, key) && hasStringOver((value as Record<string, unknown>)[key], limit))
      return true;
  }
  return false;
}

/**
 * A tool call's input with every string longer than `limit` cut to its head; the same value when nothing
 * is over, else a copy of the objects and arrays on the way to what was cut. Keys are copied as own data
 * properties (a `__proto__` key stays a key). The input passed the reader's nesting limit, so the recursion
 * is bounded.
 */
export function capInputStrings(value: unknown, limit: number): unknown {
  // Most inputs have nothing over the cap: one walk that allocates nothing says so.
  return hasStringOver(value, limit) ? copyCapped(value, limit) : value;
}

function copyCapped(value: unknown, limit: number): unknown {
  if (typeof value === 'string') return capHead(value, limit);
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let changed = false;
    const items = (value as unknown[]).map((item) => {
      const capped = copyCapped(item, limit);
      if (capped !== item) changed = true;
      return capped;
    });
    return changed ? items : value;
  }
  let changed = false;
  const entries = Object.entries(value).map(([key, item]): [string, unknown] => {
    const capped = copyCapped(item, limit);
    if (capped !== item) changed = true;
    return [key, capped];
  });
  return changed ? Object.fromEntries(entries) : value;
}

function toolResultText(
  content: Extract<ContentBlock, { type: 'tool_result' }>['content'],
  limit: number,
): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return capHead(content, limit);
  const texts: string[] = [];
  for (const block of content) {
    if (block.type === 'text' && block.text !== undefined) texts.push(block.text);
    else if (block.type === 'image') texts.push(IMAGE_PLACEHOLDER);
  }
  return capHead(texts.join('\n'), limit);
}

/**
 * Turns a message's content blocks (Anthropic or OpenAI parts) into parts, each cut to `caps`; `where`
 * prefixes warnings.
 */
export function blocksToParts(
  content: MessageContent | undefined,
  where: string,
  warnings: string[],
  caps: PartCaps = DEFAULT_PART_CAPS,
): MessagePart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') {
    return content.length === 0 ? [] : [{ kind: 'text', text: capHeadAndTail(content, caps.textChars) }];
  }
  const parts: MessagePart[] = [];
  const blocks = content.length > caps.blocksPerMessage ? content.slice(0, caps.blocksPerMessage) : content;
  if (blocks !== content) {
    warnings.push(blocksDroppedWarning(where, content.length - blocks.length, caps.blocksPerMessage));
  }
  blocks.forEach((block, position) => {
    switch (block.type) {
      case 'text':
        parts.push({ kind: 'text', text: capHeadAndTail(block.text, caps.textChars) });
        break;
      case 'refusal':
        parts.push({ kind: 'text', text: capHeadAndTail(block.refusal, caps.textChars) });
        break;
      case 'thinking':
        parts.push({ kind: 'thinking', text: capHeadAndTail(block.thinking, caps.textChars) });
        break;
      case 'redacted_thinking':
        // Encrypted reasoning: nothing a reader can use.
        break;
      case 'image':
      case 'image_url':
        parts.push({ kind: 'text', text: IMAGE_PLACEHOLDER });
        break;
      case 'tool_use':
        parts.push({
          kind: 'tool-call',
          id: block.id,
          name: block.name,
          input: capInputStrings(block.input, caps.toolInputChars),
        });
        break;
      case 'tool_result':
        parts.push({
          kind: 'tool-result',
          toolCallId: block.tool_use_id,
          text: toolResultText(block.content, caps.toolResultChars),
          isError: block.is_error === true,
        });
        break;
      case 'unknown':
        warnings.push(`${where}.content.${position}: unknown block type "${block.originalType}" skipped`);
        break;
    }
  });
  // A pushed-to array keeps room for 16 more; a Session holds one per message, so it keeps an exact copy.
  return parts.slice();
}

function toolCallToPart(
  call: OpenAiToolCall,
  where: string,
  warnings: string[],
  caps: PartCaps,
): MessagePart {
  const raw = call.function.arguments;
  let input: unknown = raw ?? {};
  if (raw !== undefined && raw.trim().length > 0) {
    try {
      input = JSON.parse(raw) as unknown;
    } catch {
      warnings.push(`${where}: arguments of tool call "${call.function.name}" are not JSON; kept as text`);
      input = raw;
    }
  }
  return {
    kind: 'tool-call',
    id: call.id,
    name: call.function.name,
    input: capInputStrings(input, caps.toolInputChars),
  };
}

/** Normalized role and parts of one native (Anthropic- or OpenAI-shaped) message, each cut to `caps`. */
export function nativeMessageParts(
  message: NativeMessage,
  where: string,
  warnings: string[],
  caps: PartCaps = DEFAULT_PART_CAPS,
): { role: MessageRole; parts: MessagePart[] } {
  if (message.role === 'tool') {
    // The text parts are joined first and cut once, as the result they are (not as texts).
    const whole = { ...caps, textChars: Number.POSITIVE_INFINITY };
    const text = blocksToParts(message.content, where, warnings, whole)
      .map((part) => (part.kind === 'text' ? part.text : ''))
      .join('\n');
    return {
      role: 'tool',
      parts: [
        {
          kind: 'tool-result',
          toolCallId: message.tool_call_id,
          text: capHead(text, caps.toolResultChars),
          isError: false,
        },
      ],
    };
  }
  const role: MessageRole = message.role === 'developer' ? 'system' : message.role;
  const parts = blocksToParts(message.content, where, warnings, caps);
  const calls = message.tool_calls ?? [];
  const room = Math.max(0, caps.blocksPerMessage - parts.length);
  if (calls.length > room)
    warnings.push(blocksDroppedWarning(where, calls.length - room, caps.blocksPerMessage));
  calls.slice(0, room).forEach((call, position) => {
    parts.push(toolCallToPart(call, `${where}.tool_calls.${position}`, warnings, caps));
  });
  return { role, parts: parts.slice() };
}
