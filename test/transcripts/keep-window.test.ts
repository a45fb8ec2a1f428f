import { describe, expect, it } from 'vitest';
import type { TranscriptFormat } from '../../src/config/schema.js';
import { createKeepWindow, partsChars } from '../../src/transcripts/keep-window.js';
import { readSessionFile, type ReadSessionOptions } from '../../src/transcripts/read-session.js';
import type { Session } from '../../src/transcripts/types.js';
import { CLAUDE_CODE_FIXTURES, EXAMPLE_SESSIONS, FIXTURE, MAX_BYTES } from './helpers.js';

const CODEX_FIXTURES = new URL('../fixtures/codex/', import.meta.url).pathname;

/**
 * A reader given `keepChars` keeps messages until their characters reach it and counts the rest: the first
 * message not kept is the session's `keptUntil`, where the next read starts. Two reads, cut and continued,
 * give exactly the messages of one whole read, in every format and both ways of reading native JSON.
 */
const FILES: readonly {
  name: string;
  format: TranscriptFormat;
  dir: string;
  file: string;
  extra?: Partial<ReadSessionOptions>;
}[] = [
  {
    name: 'native, read whole',
    format: 'native',
    dir: EXAMPLE_SESSIONS,
    file: '2026-11-12-no-semicolons.json',
  },
  {
    name: 'native, streamed',
    format: 'native',
    dir: EXAMPLE_SESSIONS,
    file: '2026-11-12-no-semicolons.json',
    extra: { streamNativeAboveBytes: 0 },
  },
  {
    name: 'Claude Code JSONL',
    format: 'claude-code',
    dir: CLAUDE_CODE_FIXTURES,
    file: FIXTURE.compactBoundary,
  },
  { name: 'Codex rollout', format: 'codex', dir: CODEX_FIXTURES, file: 'agentcmd__exec-tool-calls.jsonl' },
];

async function read(
  entry: (typeof FILES)[number],
  options: Partial<ReadSessionOptions> = {},
): Promise<Session> {
  const { session } = await readSessionFile(entry.file, {
    format: entry.format,
    sessionsDir: entry.dir,
    maxBytes: MAX_BYTES,
    ...entry.extra,
    ...options,
  });
  return session;
}

describe.each(FILES)('a read window, $name', (entry) => {
  it('keeps messages up to the one that fills the window, and the next read goes on from there', async () => {
    const whole = await read(entry);
    expect(whole.messages.length).toBeGreaterThanOrEqual(3);
    expect(whole.keptUntil).toBeUndefined();
    const total = whole.messages.reduce((sum, message) => sum + partsChars(message.parts), 0);
    const keepChars = Math.ceil(total / 2);
    // The message that reaches half the characters is the last one kept.
    let chars = 0;
    const last = whole.messages.findIndex((message) => (chars += partsChars(message.parts)) >= keepChars);
    const cut = await read(entry, { keepChars });
    expect(cut.messages).toEqual(whole.messages.slice(0, last + 1));
    expect(cut.messageCount).toBe(whole.messageCount);
    expect(cut.keptUntil).toBe(whole.messages[last + 1]?.index);
    const rest = await read(entry, { fromMessage: cut.keptUntil });
    expect([...cut.messages, ...rest.messages]).toEqual(whole.messages);
  });

  it('keeps one message however small the window', async () => {
    const whole = await read(entry);
    const cut = await read(entry, { keepChars: 1 });
    expect(cut.messages).toEqual(whole.messages.slice(0, 1));
    expect(cut.keptUntil).toBe(whole.messages[1]?.index);
  });
});

describe('createKeepWindow', () => {
  const text = (length: number) => [{ kind: 'text' as const, text: 'x'.repeat(length) }];

  it('keeps from fromMessage until the characters reach keepChars, and says where it stopped', () => {
    const window = createKeepWindow(2, 10);
    expect([0, 1].map((index) => window.keeps(index))).toEqual([false, false]);
    expect(window.keeps(2)).toBe(true);
    window.kept(2, text(6));
    expect(window.keeps(3)).toBe(true);
    window.kept(3, text(4));
    expect([4, 5].map((index) => window.keeps(index))).toEqual([false, false]);
    expect(window.keptUntil(6)).toBe(4);
    expect(window.keptUntil(4)).toBeUndefined();
  });

  it('keeps everything without a limit', () => {
    const window = createKeepWindow(0);
    window.kept(0, text(1_000_000));
    expect(window.keeps(1)).toBe(true);
    expect(window.keptUntil(2)).toBeUndefined();
  });

  it('counts tool calls, tool results and sub-agent parts', () => {
    expect(
      partsChars([
        { kind: 'tool-call', id: 't', name: 'Bash', input: { command: 'ls -la', nested: ['ab'] } },
        { kind: 'tool-result', toolCallId: 't', text: 'four', isError: false },
        { kind: 'subagent', agentId: 'a', toolCallId: undefined, prompt: 'pp', answer: 'aaa' },
      ]),
    ).toBeGreaterThanOrEqual('Bash'.length + 'ls -la'.length + 'ab'.length + 4 + 2 + 3);
  });
});
