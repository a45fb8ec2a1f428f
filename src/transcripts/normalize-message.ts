import type { MessagePart, MessageRole } from './types.js';
import type { ContentBlock, MessageContent, NativeMessage, OpenAiToolCall } from './message-schema.js';

/**
 * Pure conversion of provider-shaped message content into the normalized `MessagePart`s.
 * Warnings (skipped blocks, tool arguments that are not JSON) are pushed to the `warnings` array given.
 */

/** Placeholder text for an image, in messages and tool results. */
export const IMAGE_PLACEHOLDER = '[image]';

function toolResultText(content: Extract<ContentBlock, { type: 'tool_result' }>['content']): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  const texts: string[] = [];
  for (const block of content) {
    if (block.type === 'text' && block.text !== undefined) texts.push(block.text);
    else if (block.type === 'image') texts.push(IMAGE_PLACEHOLDER);
  }
  return texts.join('\n');
}

/** Turns a message's content blocks (Anthropic or OpenAI parts) into parts; `where` prefixes warnings. */
export function blocksToParts(
  content: MessageContent | undefined,
  where: string,
  warnings: string[],
): MessagePart[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content.length === 0 ? [] : [{ kind: 'text', text: content }];
  const parts: MessagePart[] = [];
  content.forEach((block, position) => {
    switch (block.type) {
      case 'text':
        parts.push({ kind: 'text', text: block.text });
        break;
      case 'refusal':
        parts.push({ kind: 'text', text: block.refusal });
        break;
      case 'thinking':
        parts.push({ kind: 'thinking', text: block.thinking });
        break;
      case 'redacted_thinking':
        // Encrypted reasoning: nothing a reader can use.
        break;
      case 'image':
      case 'image_url':
        parts.push({ kind: 'text', text: IMAGE_PLACEHOLDER });
        break;
      case 'tool_use':
        parts.push({ kind: 'tool-call', id: block.id, name: block.name, input: block.input });
        break;
      case 'tool_result':
        parts.push({
          kind: 'tool-result',
          toolCallId: block.tool_use_id,
          text: toolResultText(block.content),
          isError: block.is_error === true,
        });
        break;
      case 'unknown':
        warnings.push(`${where}.content.${position}: unknown block type "${block.originalType}" skipped`);
        break;
    }
  });
  return parts;
}

function toolCallToPart(call: OpenAiToolCall, where: string, warnings: string[]): MessagePart {
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
  return { kind: 'tool-call', id: call.id, name: call.function.name, input };
}

/** Normalized role and parts of one native (Anthropic- or OpenAI-shaped) message. */
export function nativeMessageParts(
  message: NativeMessage,
  where: string,
  warnings: string[],
): { role: MessageRole; parts: MessagePart[] } {
  if (message.role === 'tool') {
    const text = blocksToParts(message.content, where, warnings)
      .map((part) => (part.kind === 'text' ? part.text : ''))
      .join('\n');
    return {
      role: 'tool',
      parts: [{ kind: 'tool-result', toolCallId: message.tool_call_id, text, isError: false }],
    };
  }
  const role: MessageRole = message.role === 'developer' ? 'system' : message.role;
  const parts = blocksToParts(message.content, where, warnings);
  (message.tool_calls ?? []).forEach((call, position) => {
    parts.push(toolCallToPart(call, `${where}.tool_calls.${position}`, warnings));
  });
  return { role, parts };
}
