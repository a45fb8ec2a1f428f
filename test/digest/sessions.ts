/**
 * Test helpers: Session objects built by hand, and a minimal reader of the Claude Code fixtures (test/fixtures/claude-code)
 * (the real reader lives in src/transcripts; this one only needs what the digest looks at).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { MessagePart, Session, SessionMessage } from '../../src/transcripts/types.js';
import { digestSession, type DigestOptions } from '../../src/digest/index.js';

export const FIXTURES_DIR = new URL('../fixtures/claude-code/', import.meta.url);

/** A message as the builders make it: makeSession numbers it. */
export type MessageInit = Omit<SessionMessage, 'index' | 'ts'> & { ts?: string };

export function text(value: string): MessagePart {
  return { kind: 'text', text: value };
}

export function toolCall(name: string, input: unknown, id = `call-${name}`): MessagePart {
  return { kind: 'tool-call', id, name, input };
}

export function toolResult(value: string, id = 'call', isError = false): MessagePart {
  return { kind: 'tool-result', toolCallId: id, text: value, isError };
}

export function user(...parts: (MessagePart | string)[]): MessageInit {
  return { role: 'user', parts: parts.map((part) => (typeof part === 'string' ? text(part) : part)) };
}

export function assistant(...parts: (MessagePart | string)[]): MessageInit {
  return { role: 'assistant', parts: parts.map((part) => (typeof part === 'string' ? text(part) : part)) };
}

/** A session from messages; each message without `ts` gets one a minute after the previous. */
export function makeSession(id: string, startedAt: string, messages: readonly MessageInit[]): Session {
  const start = Date.parse(startedAt);
  const built = messages.map((message, index): SessionMessage => ({
    ...message,
    index,
    ts: message.ts ?? new Date(start + index * 60_000).toISOString(),
  }));
  return {
    id,
    file: `/sessions/${id}.json`,
    format: 'native',
    startedAt,
    endedAt: undefined,
    agent: undefined,
    messages: built,
    messageCount: built.length,
    warnings: [],
  };
}

/** When the digest tests' sessions start: 2026-11-20 14:03 UTC. */
export const SESSION_START = '2026-11-20T14:03:00Z';

/** The digest of session `s1`, of `messages`, started at SESSION_START, line by line (header first). */
export function digestLines(messages: readonly MessageInit[], options: DigestOptions = {}): string[] {
  return digestSession(makeSession('s1', SESSION_START, messages), options).text.split('\n');
}

/** A content block: its type, and whichever of the other fields that type has. */
const Block = z
  .looseObject({
    type: z.string(),
    text: z.string(),
    thinking: z.string(),
    id: z.string(),
    name: z.string(),
    input: z.unknown(),
    tool_use_id: z.string(),
    is_error: z.boolean(),
    content: z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))]),
  })
  .partial()
  .required({ type: true });

/** A line of a transcript: its type, and whichever of the other fields that type has. */
const Line = z
  .looseObject({
    type: z.string(),
    timestamp: z.string(),
    isMeta: z.boolean(),
    isSidechain: z.boolean(),
    isCompactSummary: z.boolean(),
    message: z.looseObject({
      role: z.enum(['user', 'assistant']),
      content: z.union([z.string(), z.array(Block)]),
    }),
  })
  .partial()
  .required({ type: true });

function toPart(block: z.infer<typeof Block>): MessagePart | undefined {
  switch (block.type) {
    case 'text':
      return text(block.text ?? '');
    case 'thinking':
      return { kind: 'thinking', text: block.thinking ?? '' };
    case 'tool_use':
      return { kind: 'tool-call', id: block.id, name: block.name ?? 'tool', input: block.input };
    case 'tool_result': {
      const content = block.content ?? '';
      const joined =
        typeof content === 'string'
          ? content
          : content.map((item) => (item.type === 'image' ? '[image]' : (item.text ?? ''))).join('\n');
      return {
        kind: 'tool-result',
        toolCallId: block.tool_use_id,
        text: joined,
        isError: block.is_error ?? false,
      };
    }
    default:
      return undefined;
  }
}

/** Read a Claude Code fixture into a Session: conversation lines only, other line types skipped. */
export function readClaudeCodeFixture(name: string): { session: Session; rawBytes: number } {
  const raw = readFileSync(new URL(name, FIXTURES_DIR), 'utf8');
  const messages: SessionMessage[] = [];
  for (const jsonLine of raw.split('\n')) {
    if (jsonLine.trim() === '') continue;
    const line = Line.parse(JSON.parse(jsonLine));
    if ((line.type !== 'user' && line.type !== 'assistant') || line.message === undefined) continue;
    const content = line.message.content;
    const parts =
      typeof content === 'string'
        ? [text(content)]
        : content.map(toPart).filter((part): part is MessagePart => part !== undefined);
    messages.push({
      index: messages.length,
      role: line.message.role,
      ts: line.timestamp,
      parts,
      ...(line.isSidechain === true ? { sidechain: true } : {}),
      ...(line.isCompactSummary === true ? { compactSummary: true } : {}),
      ...(line.isMeta === true ? { meta: true } : {}),
    });
  }
  const session: Session = {
    id: name.replace(/\.jsonl$/, ''),
    file: name,
    format: 'claude-code',
    startedAt: messages[0]?.ts ?? '2026-01-01T00:00:00Z',
    endedAt: undefined,
    agent: undefined,
    messages,
    messageCount: messages.length,
    warnings: [],
  };
  return { session, rawBytes: Buffer.byteLength(raw) };
}
