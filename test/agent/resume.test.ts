import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { restoreSession, type MemoryAgentOptions } from '../../src/agent/memory-agent.js';
import { ChatConfig } from '../../src/config/schema.js';
import { ConfigError } from '../../src/errors.js';
import { readSessionFile } from '../../src/transcripts/index.js';
import { createSessionRecorder } from '../../src/transcripts/session-recorder.js';
import { useAgentFixture } from './support/agent-fixture.js';

const agentFixture = useAgentFixture('resume');
const { fake } = agentFixture;
const space = () => agentFixture.space('r');
const config = () => ({ ...agentFixture.config(), chat: ChatConfig.parse({ contextWindow: 8_192 }) });
/** An agent of the space with an 8,192-token context window, `options` over it. */
const resumable = (options: Partial<Omit<MemoryAgentOptions, 'space'>>) =>
  agentFixture.agent(space(), { config: config(), ...options });

interface RecordedFile {
  endedAt?: string;
  messages: Array<{ role: string; content: unknown; dreamdSummary?: unknown }>;
}

describe('resuming a recorded session', () => {
  it('continues the history and its summary in the same file', async () => {
    fake.server.setDefault((request) =>
      request.system.includes('running summary')
        ? { text: 'Earlier: the user is planning a trip to Lisbon.' }
        : { text: `reply ${request.index} ${'y'.repeat(3_000)}` },
    );
    const first = await resumable({ sessionId: 'trip' });
    for (let turn = 0; turn < 8; turn++) await first.chat(`stop ${turn} in Lisbon ${'z'.repeat(2_000)}`);
    await first.end();
    expect(first.summary).toBeDefined();
    const historyLength = first.history.length;

    const resumed = await resumable({ sessionId: 'trip', resume: true });
    expect(resumed.history).toHaveLength(historyLength);
    expect(resumed.summary).toEqual(first.summary);
    fake.server.requests.length = 0;
    await resumed.chat('And where do we go after that?');
    await resumed.end();

    const sent = JSON.stringify(fake.server.requests.at(-1)!.body.messages);
    expect(sent).toContain('Earlier: the user is planning a trip to Lisbon.');
    expect(sent).toContain('stop 7 in Lisbon');
    expect(sent).toContain('And where do we go after that?');
    expect(await readdir(space().sessionsDir)).toEqual(['trip.json']);
    const file = JSON.parse(await readFile(resumed.sessionFile, 'utf8')) as RecordedFile;
    expect(file.endedAt).toBeDefined();
    expect(file.messages.filter((message) => message.role === 'system').length).toBeGreaterThan(0);
    expect(file.messages.filter((message) => message.role === 'user').at(-1)).toMatchObject({
      content: 'And where do we go after that?',
    });
    // The session still reads as a native transcript for consolidation.
    const read = await readSessionFile(resumed.sessionFile, {
      format: 'native',
      maxBytes: 1024 * 1024,
      sessionsDir: space().sessionsDir,
    });
    expect(read.session.messages.length).toBe(file.messages.length);
  });

  it('refuses a missing session and one recorded by another tool', async () => {
    await expect(resumable({ sessionId: 'nope', resume: true })).rejects.toBeInstanceOf(ConfigError);
    await mkdir(space().sessionsDir, { recursive: true });
    const foreign = path.join(space().sessionsDir, 'other.json');
    const bytes = JSON.stringify({
      id: 'other',
      startedAt: '2026-11-01T00:00:00Z',
      agent: 'someone',
      messages: [],
    });
    await writeFile(foreign, bytes);
    await expect(resumable({ sessionId: 'other', resume: true })).rejects.toThrow(/recorded by "someone"/);
    expect(await readFile(foreign, 'utf8')).toBe(bytes);
  });

  it('answers the tool calls of a session that stopped before their results', async () => {
    await mkdir(space().sessionsDir, { recursive: true });
    const recorder = await createSessionRecorder({
      sessionsDir: space().sessionsDir,
      id: 'cut',
      agent: 'dreamd-chat',
    });
    await recorder.append({ role: 'user', content: 'save this' });
    await recorder.append({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_lost', name: 'write_memory', input: {} }],
    });
    fake.server.enqueue({ text: 'Back again.' });
    const agent = await resumable({ sessionId: 'cut', resume: true });
    await agent.chat('hello?');
    await agent.end();
    const sent = fake.server.requests.at(-1)!.body.messages;
    expect(sent).toHaveLength(4);
    expect(sent[2]).toMatchObject({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_lost', is_error: true }],
    });
  });

  it('records system and tool messages as the readers accept them', async () => {
    const recorder = await createSessionRecorder({ sessionsDir: space().sessionsDir, id: 'oa' });
    await recorder.append({ role: 'system', content: 'You are a coding agent.' });
    await recorder.append({ role: 'user', content: 'Fix the bug' });
    await recorder.append({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"f":"main.py"}' } },
      ],
    });
    await recorder.append({ role: 'tool', tool_call_id: 'call_1', content: 'print(1)' });
    await recorder.end();
    const read = await readSessionFile(recorder.file, {
      format: 'native',
      maxBytes: 1024 * 1024,
      sessionsDir: space().sessionsDir,
    });
    expect(read.session.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
    ]);
  });

  it('restores only user and assistant turns, and the latest summary', () => {
    const restored = restoreSession([
      { role: 'user', content: 'a', ts: '2026-11-01T00:00:00Z' },
      { role: 'assistant', content: [{ type: 'text', text: 'b' }] },
      { role: 'system', content: 'old', dreamdSummary: { cut: 1 } },
      { role: 'user', content: 'c' },
      { role: 'system', content: 'new', dreamdSummary: { cut: 2 } },
      { role: 'user', content: 'd' },
    ]);
    expect(restored.history).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: [{ type: 'text', text: 'b' }] },
      { role: 'user', content: 'c' },
      { role: 'user', content: 'd' },
    ]);
    expect(restored.summary).toEqual({ text: 'new', cut: 2 });
  });
});
