/**
 * The screen a note the agent saves passes (`write_memory`, Anthropic's memory tool): the one transcripts'
 * candidate facts pass before consolidation writes them (`screen/screen-candidates.ts`), run on the
 * session so far. A note whose words the agent read in a tool result of the session (a README, a web page, a
 * file) and that is a preference or a rule is held back, as is one that reads as an instruction or carries a
 * secret: a page cannot tell the agent how to behave, only the user can.
 *
 * The session is read as the digest reads a transcript: the user's text is the user's, a tool's result is text
 * the agent read (with the tool's name). Two kinds of text are left out: the assistant's own words (an agent
 * restates what the user said before it saves it, which is not reading), and the results of the memory tools
 * themselves (memory read back to rewrite a fact is memory, already screened when it was saved).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { containsSecret } from '../digest/redact-secrets.js';
import type { DigestLine } from '../digest/types.js';
import { createProvenance, type ScreenedCandidate } from '../screen/provenance.js';
import { screenCandidates } from '../screen/screen-candidates.js';
import { screenFactText } from '../screen/screen-fact.js';
import type { FactType } from '../memory/types.js';

/** A message of the session, in the Anthropic Messages shape the agent kit uses. */
export type ConversationMessage = Anthropic.MessageParam;

/** Tools whose results are memory itself: not text read from outside. */
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

function oneLine(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

function textOf(
  content: Anthropic.ToolResultBlockParam['content'] | Anthropic.MessageParam['content'],
): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content.map((block) => (block.type === 'text' ? block.text : '')).join(' ');
}

/**
 * The session as digest lines: `user: …` for the user's text, `tool ← Name: …` for each tool result
 * (the tool's name found from its call), in order; the assistant's words and the memory tools' results left out.
 */
export function conversationLines(messages: readonly ConversationMessage[]): DigestLine[] {
  const toolNames = new Map<string, string>();
  const lines: DigestLine[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      if (typeof message.content === 'string') return;
      for (const block of message.content) {
        if (block.type === 'tool_use' || block.type === 'server_tool_use')
          toolNames.set(block.id, block.name);
      }
      return;
    }
    if (typeof message.content === 'string') {
      const text = oneLine(message.content);
      if (text !== '') lines.push({ message: index, text: `user: ${text}` });
      return;
    }
    for (const block of message.content) {
      if (block.type === 'text') {
        const text = oneLine(block.text);
        if (text !== '') lines.push({ message: index, text: `user: ${text}` });
      } else if (block.type === 'tool_result') {
        const name = toolNames.get(block.tool_use_id) ?? 'tool';
        if (MEMORY_TOOL_NAMES.has(name)) continue;
        const text = oneLine(textOf(block.content));
        if (text !== '')
          lines.push({
            message: index,
            text: `tool ← ${name}${block.is_error === true ? ' ERROR' : ''}: ${text}`,
          });
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
  const provenance = createProvenance([
    { sessionId: SESSION, header: '', lines: conversationLines(messages) },
  ]);
  return screenCandidates([candidate], { containsSecret, provenance }).get(candidate);
}
