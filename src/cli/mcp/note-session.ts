/**
 * What the note screen is given for a note an MCP client saves. The server sees no conversation: only the note,
 * which the client's agent wrote and may have read anywhere (a README, a page, another tool), and, when the
 * client passes them, the user's own words (`userSaid`). So the session the screen reads is exactly that:
 * the user's words as the user's line, and the note as text read from the client (a tool result of
 * `mcp-client`). The one screen of `write_memory` then decides as it does for any agent (`note-screen.ts`): a
 * fact passes; a rule, a preference or an order passes only when the user's words hold it; an instruction or a
 * secret never passes. Without `userSaid` a rule is refused, and the tool says to ask the user.
 */
import type { ConversationMessage } from '../../agent/note-screen.js';

/** The name the note's text is read under: its reason names it ("a tool result (mcp-client)"). */
export const NOTE_SOURCE = 'mcp-client';

/** The note as one text: title, body, why, how to apply. */
function noteText(note: {
  readonly title: string;
  readonly body: string;
  readonly why?: string | undefined;
  readonly howToApply?: string | undefined;
}): string {
  return [note.title, note.body, note.why ?? '', note.howToApply ?? '']
    .filter((part) => part !== '')
    .join('\n');
}

/** The session the screen reads for this note (see the module comment). */
export function noteSession(
  note: Parameters<typeof noteText>[0],
  userSaid: string | undefined,
): ConversationMessage[] {
  const said = userSaid?.trim() ?? '';
  return [
    ...(said === '' ? [] : [{ role: 'user' as const, content: said }]),
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'note', name: NOTE_SOURCE, input: {} }],
    },
    {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'note', content: noteText(note) }],
    },
  ];
}
