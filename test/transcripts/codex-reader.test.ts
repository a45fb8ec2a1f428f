import { appendFile, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TranscriptError, TranscriptErrorReason } from '../../src/errors.js';
import { createCodexAccumulator, isInjectedUserText } from '../../src/transcripts/codex-lines.js';
import { readSession } from '../../src/transcripts/read-session.js';
import type { Session } from '../../src/transcripts/types.js';
import { CODEX_FIXTURE, CODEX_FIXTURES, MAX_BYTES, readTranscript, CODEX_HEAD_DROPPED } from './helpers.js';
import { useTempDir } from '../support/fixtures.js';

function readFixture(name: string, fromMessage?: number): Promise<Session> {
  return readTranscript('codex', CODEX_FIXTURES, name, { fromMessage });
}

/** Role and part kinds of each message, e.g. `assistant:tool-call`. */
function shape(session: Session): string[] {
  return session.messages.map(
    (message) =>
      `${message.role}${message.compactSummary === true ? '[compact]' : ''}:${message.parts.map((part) => part.kind).join(',')}`,
  );
}

function texts(session: Session): string[] {
  return session.messages.flatMap((message) =>
    message.parts.flatMap((part) => (part.kind === 'text' ? [part.text] : [])),
  );
}

/** Reads lines given as values through the pure accumulator. */
function readLines(lines: readonly unknown[], fromMessage = 0): Session {
  const accumulator = createCodexAccumulator({ file: '/s/rollout-x.jsonl', stem: 'rollout-x', fromMessage });
  lines.forEach((line, index) =>
    accumulator.addLine(typeof line === 'string' ? line : JSON.stringify(line), index + 1),
  );
  return accumulator.finish(new Date('2026-01-01T00:00:00Z'));
}

const META = {
  timestamp: '2026-03-01T10:00:00.000Z',
  type: 'session_meta',
  payload: { id: 'sess-1', cwd: '/repo', cli_version: '0.77.0' },
};

function item(payload: Record<string, unknown>, timestamp = '2026-03-01T10:00:01.000Z'): unknown {
  return { timestamp, type: 'response_item', payload };
}

function userText(text: string): unknown {
  return item({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
}

describe('Codex reader on the public rollout slices', () => {
  it('reads the head of a real rollout: the request and the tool calls kept, the rest dropped and counted', async () => {
    const session = await readFixture(CODEX_FIXTURE.head);
    expect(session.id).toBe('019aad50-a7e6-7422-b7a8-0b384290624f');
    expect(session.format).toBe('codex');
    expect(session.agent).toBe('codex 0.60.1');
    expect(session.cwd).toBe('/Users/pinouchon/code/rtchess');
    expect(session.startedAt).toBe('2025-11-22T20:45:35.610Z');
    expect(session.endedAt).toBeUndefined();
    expect(shape(session)).toEqual([
      'user:text',
      'assistant:tool-call',
      'tool:tool-result',
      'assistant:tool-call',
      'tool:tool-result',
    ]);
    expect(session.messageCount).toBe(5);
    expect(texts(session)[0]).toMatch(/^I want to make a chess variant that isn't real time/);
    expect(session.dropped).toEqual(CODEX_HEAD_DROPPED);
    expect(session.warnings).toEqual([]);
    expect(JSON.stringify(session.messages)).not.toMatch(/environment_context|Inspecting repository|gAAAAAB/);
  });

  it('turns a function call into one tool call with its parsed arguments, and its output into a tool result', async () => {
    const session = await readFixture(CODEX_FIXTURE.head);
    expect(session.messages[1]?.parts[0]).toEqual({
      kind: 'tool-call',
      id: 'call_KLyTWxCoVwf4p9s4u1x5YS1b',
      name: 'shell_command',
      input: { command: 'ls', workdir: '.', timeout_ms: 120000 },
    });
    expect(session.messages[4]?.parts[0]).toEqual({
      kind: 'tool-result',
      toolCallId: 'call_6pFR1HMjfbxIdPT6OD9bwlEY',
      text: expect.stringMatching(/## No commits yet on main\n$/),
      isError: false,
    });
  });

  it('reads a slice without session_meta under the file name, and does not repeat the agent_message events', async () => {
    const session = await readFixture(CODEX_FIXTURE.tail);
    expect(session.id).toBe('pinouchon-rtchess__rollout-tail');
    expect(session.agent).toBe('codex');
    expect(shape(session)).toEqual(['assistant:text', 'user:text', 'assistant:text']);
    expect(texts(session)).toEqual([
      expect.stringMatching(/^Re-enabled automatic session discovery/),
      "this is a test prompt. Don't do anythin",
      '(acknowledged – no action taken)',
    ]);
    expect(session.dropped).toEqual({ event_msg: 5, turn_context: 1, 'ghost_snapshot item': 1 });
  });

  it('reads a codex exec session: the question and the answer, the environment and the reasoning dropped', async () => {
    const session = await readFixture(CODEX_FIXTURE.twoPlusTwo);
    expect(texts(session)).toEqual(['what is 2+2? just give me the answer', '4']);
    expect(session.agent).toBe('codex 0.46.0');
    expect(session.dropped).toMatchObject({ 'injected context': 1, reasoning: 1 });
  });

  it("reads shell and apply_patch calls, and the text of Codex's {output, metadata} results", async () => {
    const session = await readFixture(CODEX_FIXTURE.toolCalls);
    expect(session.messages.map((message) => message.parts[0])).toEqual([
      {
        kind: 'tool-call',
        id: 'call_AnMStssFtufeBXJJ9HuJQeb0',
        name: 'shell',
        input: { command: ['bash', '-lc', 'ls'], workdir: '/private/tmp/codex-research-test' },
      },
      {
        kind: 'tool-result',
        toolCallId: 'call_AnMStssFtufeBXJJ9HuJQeb0',
        text: 'file1.txt\nfile2.txt\n',
        isError: false,
      },
      {
        kind: 'tool-call',
        id: 'call_fnIi6MnTDYfAHIKJsyUyzkvr',
        name: 'apply_patch',
        input: { input: '*** Begin Patch\n*** Add File: hello.txt\n+Hello from Codex\n*** End Patch' },
      },
      {
        kind: 'tool-result',
        toolCallId: 'call_fnIi6MnTDYfAHIKJsyUyzkvr',
        text: 'Success. Updated the following files:\nA hello.txt\n',
        isError: false,
      },
    ]);
  });

  it('reads from a message on: earlier messages are counted, not returned, and indices stay those of the file', async () => {
    const session = await readFixture(CODEX_FIXTURE.head, 3);
    expect(session.messageCount).toBe(5);
    expect(session.messages.map((message) => message.index)).toEqual([3, 4]);
  });
});

describe('Codex reader on the lines its source defines', () => {
  it('drops the context Codex injects as user messages, and developer and system messages', () => {
    const session = readLines([
      META,
      userText('<user_instructions>\nAlways use pnpm.\n</user_instructions>'),
      userText('# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nRun the tests.\n</INSTRUCTIONS>'),
      userText('  <environment_context>\n  <cwd>/repo</cwd>\n</environment_context>'),
      item({ type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are Codex.' }] }),
      item({ type: 'message', role: 'system', content: [{ type: 'input_text', text: 'sys' }] }),
      userText('we deploy from the release branch only'),
    ]);
    expect(texts(session)).toEqual(['we deploy from the release branch only']);
    expect(session.dropped).toEqual({
      session_meta: 1,
      'injected context': 3,
      'developer message': 1,
      'system message': 1,
    });
  });

  it('keeps a compacted summary as a compact-summary message and drops empty messages', () => {
    const session = readLines([
      META,
      {
        timestamp: '2026-03-01T11:00:00.000Z',
        type: 'compacted',
        payload: { message: 'The user wants squash merges.' },
      },
      item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '   ' }] }),
    ]);
    expect(shape(session)).toEqual(['user[compact]:text']);
    expect(session.messages[0]?.ts).toBe('2026-03-01T11:00:00.000Z');
    expect(session.dropped).toMatchObject({ 'empty message': 1 });
  });

  it('reads local_shell_call, web_search_call, a failing command and a structured output', () => {
    const session = readLines([
      META,
      item({
        type: 'local_shell_call',
        call_id: 'c1',
        status: 'completed',
        action: { type: 'exec', command: ['npm', 'test'] },
      }),
      item({
        type: 'function_call_output',
        call_id: 'c1',
        output: '{"output":"1 failed","metadata":{"exit_code":1}}',
      }),
      item({
        type: 'web_search_call',
        id: 'ws1',
        status: 'completed',
        action: { type: 'search', query: 'vitest retry' },
      }),
      item({ type: 'function_call_output', call_id: 'c2', output: { content: 'denied', success: false } }),
      item({ type: 'function_call', name: 'exec', arguments: 'not json', call_id: 'c3' }),
    ]);
    expect(session.messages.map((message) => message.parts[0])).toEqual([
      { kind: 'tool-call', id: 'c1', name: 'local_shell', input: { command: ['npm', 'test'] } },
      { kind: 'tool-result', toolCallId: 'c1', text: '1 failed', isError: true },
      { kind: 'tool-call', id: 'ws1', name: 'web_search', input: { type: 'search', query: 'vitest retry' } },
      { kind: 'tool-result', toolCallId: 'c2', text: 'denied', isError: true },
      { kind: 'tool-call', id: 'c3', name: 'exec', input: { arguments: 'not json' } },
    ]);
  });

  it('warns once for an unknown line type and for a broken line, counts them, and goes on', () => {
    const session = readLines([
      META,
      { timestamp: '2026-03-01T10:00:02.000Z', type: 'world_state', payload: {} },
      { timestamp: '2026-03-01T10:00:03.000Z', type: 'world_state', payload: {} },
      '{"timestamp":',
      item({ type: 'image_generation_call', id: 'i1' }),
      userText('keep going'),
    ]);
    expect(texts(session)).toEqual(['keep going']);
    expect(session.warnings).toEqual([
      'line 2: line type "world_state" is not known, skipped (and any more of it)',
      expect.stringMatching(/^line 4: invalid JSON/),
    ]);
    expect(session.dropped).toMatchObject({ 'world_state line': 2, 'image_generation_call item': 1 });
  });

  it('uses the file name when session_meta names an id that cannot be one', () => {
    const session = readLines([{ ...META, payload: { id: 'a\nb' } }, userText('hi there, use tabs')]);
    expect(session.id).toBe('rollout-x');
    expect(session.warnings).toEqual([expect.stringMatching(/^line 1: session id is not a usable id/)]);
  });

  it('tells injected context from the words of a person', () => {
    expect(isInjectedUserText('<environment_context>x</environment_context>')).toBe(true);
    expect(isInjectedUserText('\n# AGENTS.md instructions for /r')).toBe(true);
    expect(isInjectedUserText('please read <environment_context> later')).toBe(false);
  });
});

describe('Codex reader on broken files', () => {
  const dir = useTempDir('codex-reader');

  it('refuses a file without one valid JSON line, naming the file', async () => {
    await writeFile(join(dir.path, 'rollout-bad.jsonl'), 'not json\nnor this\n');
    const failure = await readTranscript('codex', dir.path, 'rollout-bad.jsonl').catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(TranscriptError);
    expect(failure).toMatchObject({
      reason: TranscriptErrorReason.invalidJson,
      message: expect.stringContaining('rollout-bad.jsonl'),
    });
  });

  it('reads a rollout in its dated folder, and after it grew only the new part', async () => {
    const folder = join(dir.path, '2025', '11', '22');
    await mkdir(folder, { recursive: true });
    const file = join(
      '2025',
      '11',
      '22',
      'rollout-2025-11-22T21-45-35-019aad50-a7e6-7422-b7a8-0b384290624f.jsonl',
    );
    await copyFile(join(CODEX_FIXTURES, CODEX_FIXTURE.head), join(dir.path, file));
    const options = { format: 'codex', sessionsDir: dir.path, maxBytes: MAX_BYTES } as const;
    const first = await readSession(file, options);
    expect(first.messageCount).toBe(5);
    await appendFile(join(dir.path, file), await readFile(join(CODEX_FIXTURES, CODEX_FIXTURE.tail)));
    const grown = await readSession(file, { ...options, fromMessage: first.messageCount });
    expect(grown.id).toBe('019aad50-a7e6-7422-b7a8-0b384290624f');
    expect(grown.messageCount).toBe(8);
    expect(texts(grown)).toEqual([
      expect.stringMatching(/^Re-enabled automatic session discovery/),
      "this is a test prompt. Don't do anythin",
      '(acknowledged – no action taken)',
    ]);
  });
});
