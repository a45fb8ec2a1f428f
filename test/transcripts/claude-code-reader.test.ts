import { appendFile, copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TranscriptError } from '../../src/errors.js';
import type { MessagePart, Session } from '../../src/transcripts/types.js';
import { CLAUDE_CODE_FIXTURES, FIXTURE, readTranscript } from './helpers.js';
import { useTempDir } from '../support/fixtures.js';

function readFixture(name: string, fromMessage?: number): Promise<Session> {
  return readTranscript('claude-code', CLAUDE_CODE_FIXTURES, name, { fromMessage });
}

/** Compact picture of a message: role, flags and part kinds, e.g. `assistant:thinking,text,tool-call`. */
function shape(session: Session): string[] {
  return session.messages.map((message) => {
    const flags = [
      message.meta ? 'meta' : '',
      message.compactSummary ? 'compact' : '',
      message.sidechain ? 'sidechain' : '',
    ]
      .filter((flag) => flag !== '')
      .join('+');
    return `${message.role}${flags === '' ? '' : `[${flags}]`}:${message.parts.map((part) => part.kind).join(',')}`;
  });
}

describe('Claude Code reader on the shared fixtures', () => {
  it.each([
    {
      name: 'the hello-world session: 8 messages, the Stop-hook message flagged meta',
      file: FIXTURE.helloWorld,
      id: 'de3b8b19-5bc0-4a2a-934a-1b6806567e25',
      shapes: [
        'user:text',
        'assistant:tool-call',
        'user:tool-result',
        'assistant:tool-call',
        'user:tool-result',
        'assistant:text',
        'user[meta]:text',
        'assistant:text',
      ],
    },
    {
      name: 'the summary-task session: the assistant lines sharing message.id joined, summary lines skipped',
      file: FIXTURE.summaryTask,
      id: '0790ea37-90df-4d30-8fdf-0bfe301b8f3e',
      shapes: [
        'user:text',
        'assistant:thinking,text,tool-call',
        'user:tool-result',
        'assistant:thinking,text',
      ],
    },
  ])('reads $name', async ({ file, id, shapes }) => {
    const session = await readFixture(file);
    expect(session).toMatchObject({ id, format: 'claude-code', messageCount: shapes.length, warnings: [] });
    expect(shape(session)).toEqual(shapes);
  });

  it('reads the hello-world session with its start, agent and no end', async () => {
    const session = await readFixture(FIXTURE.helloWorld);
    expect(session.startedAt).toBe('2026-01-21T06:20:30.861Z');
    expect(session.endedAt).toBeUndefined();
    expect(session.agent).toBe('claude-code 2.1.14');
    expect(session.warnings).toEqual([]);
  });

  it('takes tool results from the message content and ignores the top-level toolUseResult', async () => {
    const session = await readFixture(FIXTURE.helloWorld);
    const call = session.messages[1]?.parts[0];
    const result = session.messages[2]?.parts[0];
    expect(call).toMatchObject({ kind: 'tool-call', id: 'toolu_01R3SZZYuAq6mou5RqHE4rzF', name: 'Write' });
    expect(result).toEqual({
      kind: 'tool-result',
      toolCallId: 'toolu_01R3SZZYuAq6mou5RqHE4rzF',
      text: 'File created successfully at: /tmp/tmp74wiyiny/hello.sh',
      isError: false,
    });
  });

  it('joins the assistant lines sharing message.id and skips summary and file-history-snapshot lines', async () => {
    const session = await readFixture(FIXTURE.summaryTask);
    const task = session.messages[1]?.parts[2];
    expect(task).toMatchObject({ kind: 'tool-call', name: 'Task', id: 'toolu_01LY1C3Ff95ZoB66GNRDUWH1' });
    // The joined message keeps the timestamp of its first line.
    expect(session.messages[1]?.ts).toBe('2026-01-15T23:23:58.081Z');
    // A tool result given as text blocks is joined into one text.
    const result = session.messages[2]?.parts[0] as Extract<MessagePart, { kind: 'tool-result' }>;
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.text).not.toContain('[object Object]');
    expect(session.warnings).toEqual([]);
  });

  it('reads a mid-session slice with a compaction: 29 messages, summary and meta lines flagged', async () => {
    const session = await readFixture(FIXTURE.compactBoundary);
    expect(session.id).toBe('198393f2-22db-477b-ac77-1825bea883ae');
    expect(session.messageCount).toBe(29);
    const shapes = shape(session);
    // The caveat (isMeta), the /exit echo, its stdout and the <synthetic> answer are meta.
    expect(shapes.slice(0, 6)).toEqual([
      'user[meta]:text',
      'user[meta]:text',
      'user[meta]:text',
      'assistant[meta]:text',
      'user:text',
      'assistant:thinking,text,tool-call',
    ]);
    expect(shapes.filter((entry) => entry.includes('meta'))).toHaveLength(4);
    const compacted = session.messages.filter((message) => message.compactSummary === true);
    expect(compacted.map((message) => message.index)).toEqual([17]);
    expect(compacted[0]?.parts[0]).toMatchObject({ kind: 'text' });
    expect((compacted[0]?.parts[0] as { text: string }).text).toMatch(/^This session is being continued/);
    expect(session.messages.every((message) => message.sidechain === undefined)).toBe(true);
    expect(session.messages.map((message) => message.index)).toEqual([...Array(29).keys()]);
    expect(session.warnings).toEqual([]);
  });

  it('returns only messages from fromMessage on, with the count of the whole file', async () => {
    const session = await readFixture(FIXTURE.compactBoundary, 25);
    expect(session.messageCount).toBe(29);
    expect(session.messages.map((message) => message.index)).toEqual([25, 26, 27, 28]);
  });
});

describe('Claude Code reader on edited copies', () => {
  const directory = useTempDir('cc');

  function read(name: string, fromMessage?: number): Promise<Session> {
    return readTranscript('claude-code', directory.path, name, { fromMessage });
  }

  it('skips an invalid line and an unknown line type with warnings, and reads the rest', async () => {
    const original = await readFile(join(CLAUDE_CODE_FIXTURES, FIXTURE.helloWorld), 'utf8');
    const lines = original.split('\n');
    lines.splice(
      3,
      0,
      '{"type":"user","message":{"role":"user","content":"trunc',
      '{"type":"hologram","payload":1}',
      '',
    );
    await writeFile(join(directory.path, 's.jsonl'), lines.join('\n'));
    const session = await read('s.jsonl');
    expect(session.messageCount).toBe(8);
    expect(session.warnings).toHaveLength(2);
    expect(session.warnings[0]).toMatch(/^line 4: invalid JSON/);
    expect(session.warnings[1]).toMatch(/^line 5: line type "hologram" is not known/);
  });

  it('flags sidechain lines and falls back to the file name when no line has a sessionId', async () => {
    const lines = [
      {
        type: 'user',
        message: { role: 'user', content: 'main question' },
        timestamp: '2026-11-20T10:00:00Z',
      },
      { type: 'user', isSidechain: true, message: { role: 'user', content: 'sub-agent prompt' } },
      {
        type: 'assistant',
        isSidechain: true,
        message: { id: 'm1', role: 'assistant', content: [{ type: 'text', text: 'sub answer' }] },
      },
      { type: 'progress', data: {} },
      { type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted' },
    ];
    await writeFile(
      join(directory.path, 'stem-id.jsonl'),
      lines.map((line) => JSON.stringify(line)).join('\n') + '\n',
    );
    const session = await read('stem-id.jsonl');
    expect(session.id).toBe('stem-id');
    expect(shape(session)).toEqual(['user:text', 'user[sidechain]:text', 'assistant[sidechain]:text']);
    expect(session.warnings).toEqual([]);
  });

  it('reports a file where no line is JSON as invalid-json, naming the file and line 1', async () => {
    await writeFile(join(directory.path, 'junk.jsonl'), 'not json\nstill not json\n');
    const failure = await read('junk.jsonl').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TranscriptError);
    expect(failure).toMatchObject({ reason: 'invalid-json', file: join(directory.path, 'junk.jsonl') });
    expect((failure as Error).message).toContain('line 1');
  });

  it('reads only the messages appended since the last read', async () => {
    const file = join(directory.path, 'grow.jsonl');
    await copyFile(join(CLAUDE_CODE_FIXTURES, FIXTURE.summaryTask), file);
    const first = await read('grow.jsonl');
    expect(first.messageCount).toBe(4);
    await appendFile(
      file,
      '\n' +
        JSON.stringify({
          type: 'user',
          message: { role: 'user', content: 'and make it blue' },
          sessionId: first.id,
        }) +
        '\n' +
        JSON.stringify({
          type: 'assistant',
          message: { id: 'msg_new', role: 'assistant', content: [{ type: 'text', text: 'Done, blue.' }] },
        }) +
        '\n',
    );
    const next = await read('grow.jsonl', first.messageCount);
    expect(next.messageCount).toBe(6);
    expect(next.messages.map((message) => [message.index, message.role])).toEqual([
      [4, 'user'],
      [5, 'assistant'],
    ]);
  });
});
