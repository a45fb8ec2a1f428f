/**
 * The screen a note the agent saves passes (`write_memory`, Anthropic's memory tool): the one transcripts'
 * candidate facts pass before consolidation writes them (`screen/screen-candidates.ts`), run on the
 * session so far. A note that is a preference, a rule or an order to the agent is saved only when a line the
 * user typed states it, or the user said yes to the assistant's question about it; one whose words the agent
 * read (a README, a web page, a file, a search result, in any language or encoded) is held back, as is one
 * that reads as an instruction or carries a secret: a page cannot tell the agent how to behave, only the user
 * can.
 *
 * The session is read as the digest reads a transcript: the user's text is the user's; every other text the
 * agent was given is text it read: a tool's result whatever its blocks (text, documents, search results,
 * nested content), and the results of server tools (`web_search`, `web_fetch`, MCP tools), which sit in the
 * assistant's own turn. The assistant's words count only as the questions a user's yes answers (an agent
 * restates what the user said before it saves it, which is not reading). The results of dreamd's own memory
 * tools are left out (memory read back is memory, screened when it was saved), known by what they are
 * (`own-results.ts`), never by a tool's name.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { containsSecret } from '../digest/redact-secrets.js';
import type { DigestLine } from '../digest/types.js';
import { createProvenance, type ScreenedCandidate } from '../screen/provenance.js';
import { screenCandidates } from '../screen/screen-candidates.js';
import { screenFactText } from '../screen/screen-fact.js';
import type { FactType } from '../memory/types.js';
import { isOwnResult } from './own-results.js';

/** A message of the session, in the Anthropic Messages shape the agent kit uses. */
export type ConversationMessage = Anthropic.MessageParam;

/** The names of dreamd's memory tools; a result is memory only when one of them returned it (`own-results.ts`). */
export const MEMORY_TOOL_NAMES: ReadonlySet<string> = new Set([
  'read_memory',
  'write_memory',
  'forget_memory',
  'recall',
  'memory',
]);

/** The note as the screen reads it. */
export interface ScreenedNote {
  readonly type: FactType;
  readonly title: string;
  /** The body with its why and how to apply, as one text. */
  readonly text: string;
}

const SESSION = 'this-session';
/** Deepest nesting of blocks read for text (a search result inside a tool result inside …). */
const MAX_DEPTH = 6;
/** Fields of a block that hold what a person or a page says (never ids, types or signatures). */
const TEXT_FIELDS = [
  'title',
  'text',
  'context',
  'content',
  'source',
  'data',
  'snippet',
  'page_content',
  'stdout',
  'stderr',
  'url',
];

function oneLine(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

/**
 * All the text a block or content holds, whatever its shape: a string, text blocks, a document (its title,
 * context and plain-text or nested source), a search result (title, source, content), server tools' results
 * and their nested lists. Base64 data of a binary (a PDF, an image) is left out; encoded text inside text is
 * decoded by the screen itself.
 */
export function readableText(value: unknown, depth = 0): string {
  if (typeof value === 'string') return value;
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return '';
  if (Array.isArray(value)) return value.map((item) => readableText(item, depth + 1)).join(' ');
  const record = value as Record<string, unknown>;
  if (
    record.type === 'base64' &&
    typeof record.media_type === 'string' &&
    !record.media_type.startsWith('text/')
  )
    return '';
  if (record.type === 'image' || record.type === 'redacted_thinking') return '';
  return TEXT_FIELDS.map((field) => readableText(record[field], depth + 1))
    .filter((text) => text !== '')
    .join(' ');
}

/** A server tool's result in the assistant's turn: `web_search_tool_result`, `mcp_tool_result` … */
function isServerToolResult(block: { type: string }): boolean {
  return block.type.endsWith('_tool_result') && block.type !== 'tool_result';
}

/**
 * The session as digest lines: `user: …` for the user's text, `assistant: …` for the assistant's, `tool ←
 * Name: …` for each tool result and each server tool's result (the tool's name found from its call), in
 * order; the results dreamd's own memory tools returned left out.
 */
export function conversationLines(messages: readonly ConversationMessage[]): DigestLine[] {
  const toolNames = new Map<string, string>();
  const lines: DigestLine[] = [];
  const readLine = (index: number, name: string, text: string, error = false): void => {
    const line = oneLine(text);
    if (line !== '') lines.push({ message: index, text: `tool ← ${name}${error ? ' ERROR' : ''}: ${line}` });
  };
  messages.forEach((message, index) => {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    if (typeof message.content === 'string') {
      const text = oneLine(message.content);
      if (text !== '') lines.push({ message: index, text: `${role}: ${text}` });
      return;
    }
    for (const block of message.content as unknown as readonly { type: string; [key: string]: unknown }[]) {
      if (block.type === 'text') {
        const text = oneLine(typeof block.text === 'string' ? block.text : '');
        if (text !== '') lines.push({ message: index, text: `${role}: ${text}` });
      } else if (block.type.endsWith('tool_use') && typeof block.id === 'string') {
        toolNames.set(block.id, typeof block.name === 'string' ? block.name : block.type);
      } else if (block.type === 'tool_result' || isServerToolResult(block)) {
        const id = typeof block.tool_use_id === 'string' ? block.tool_use_id : '';
        const name =
          toolNames.get(id) ??
          (block.type === 'tool_result' ? 'tool' : block.type.replace(/_tool_result$/u, ''));
        const raw = readableText(block.content);
        // Memory read back, known by what it is: a result dreamd's own memory tool returned.
        if (MEMORY_TOOL_NAMES.has(name) && typeof block.content === 'string' && isOwnResult(block.content))
          continue;
        if (MEMORY_TOOL_NAMES.has(name) && isOwnResult(raw)) continue;
        readLine(index, name, raw, block.is_error === true);
      } else if (block.type === 'document' || block.type === 'search_result') {
        // A document or search result the application put in the conversation: read, not typed.
        readLine(index, block.type, readableText(block));
      }
    }
  });
  return lines;
}

/**
 * Why the note is held back, or undefined when it may be saved. Without the session (`messages` undefined)
 * only the note's own text is screened: secrets, redaction markers, instructions.
 */
export function screenNote(
  note: ScreenedNote,
  messages: readonly ConversationMessage[] | undefined,
): string | undefined {
  const text = [note.title, note.text].join('\n');
  if (messages === undefined) return screenFactText(text);
  const candidate: ScreenedCandidate = {
    type: note.type,
    title: note.title,
    body: note.text,
    why: null,
    howToApply: null,
    sources: [SESSION],
    // The agent saves on the user's behalf: where the words cannot be placed, the note is the user's.
    evidence: 'user',
  };
  const provenance = createProvenance(
    [{ sessionId: SESSION, header: '', lines: conversationLines(messages) }],
    { assistantLines: 'questions' },
  );
  return screenCandidates([candidate], { containsSecret, provenance }).get(candidate);
}
