import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, TranscriptError } from '../../src/errors.js';
import { createSessionRecorder } from '../../src/transcripts/session-recorder.js';
import { readTranscript } from './helpers.js';
import { useTempDir } from '../support/fixtures.js';

/** A clock that moves one second each time it is read. */
function createClock(start: string): () => Date {
  let time = Date.parse(start);
  return () => {
    const now = new Date(time);
    time += 1000;
    return now;
  };
}

describe('createSessionRecorder', () => {
  const directory = useTempDir('recorder');

  it('leaves a valid transcript on disk after every append, and end() sets endedAt', async () => {
    const sessionsDir = join(directory.path, 'sessions');
    const recorder = await createSessionRecorder({
      sessionsDir,
      id: 'chat-1',
      agent: 'demo',
      now: createClock('2026-11-26T10:00:00Z'),
    });
    expect(recorder.file).toBe(join(sessionsDir, 'chat-1.json'));
    const messages = [
      { role: 'user' as const, content: "Remember that I don't eat spicy food." },
      {
        role: 'assistant' as const,
        content: [
          { type: 'text', text: 'Saving that.' },
          { type: 'tool_use', id: 'tu1', name: 'write_memory', input: { text: 'no spicy food' } },
        ],
      },
      { role: 'user' as const, content: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'saved' }] },
      { role: 'assistant' as const, content: 'Done.', ts: '2026-11-26T10:05:00Z' },
    ];
    const initial = await readTranscript('native', sessionsDir, 'chat-1.json');
    expect(initial).toMatchObject({
      id: 'chat-1',
      agent: 'demo',
      startedAt: '2026-11-26T10:00:00.000Z',
      messageCount: 0,
    });
    for (const [count, message] of messages.entries()) {
      await recorder.append(message);
      const session = await readTranscript('native', sessionsDir, 'chat-1.json');
      expect(session.messageCount).toBe(count + 1);
      expect(session.endedAt).toBeUndefined();
    }
    await recorder.end();
    const ended = await readTranscript('native', sessionsDir, 'chat-1.json');
    expect(ended.endedAt).toBe('2026-11-26T10:00:04.000Z');
    expect(ended.messages.map((message) => message.ts)).toEqual([
      '2026-11-26T10:00:01.000Z',
      '2026-11-26T10:00:02.000Z',
      '2026-11-26T10:00:03.000Z',
      '2026-11-26T10:05:00Z',
    ]);
    expect(ended.messages[1]?.parts[1]).toEqual({
      kind: 'tool-call',
      id: 'tu1',
      name: 'write_memory',
      input: { text: 'no spicy food' },
    });
    expect(await readdir(sessionsDir)).toEqual(['chat-1.json']);
  });

  it('never lets a concurrent reader see a partial file', async () => {
    const recorder = await createSessionRecorder({ sessionsDir: directory.path, id: 'busy' });
    const long = 'x'.repeat(20_000);
    let writing = true;
    let reads = 0;
    const reader = (async () => {
      while (writing) {
        const text = await readFile(recorder.file, 'utf8');
        expect(() => JSON.parse(text) as unknown).not.toThrow();
        reads += 1;
      }
    })();
    const appends: Promise<void>[] = [];
    for (let index = 0; index < 60; index += 1) {
      appends.push(
        recorder.append({ role: index % 2 === 0 ? 'user' : 'assistant', content: `${index} ${long}` }),
      );
    }
    await Promise.all(appends);
    writing = false;
    await reader;
    expect(reads).toBeGreaterThan(0);
    const session = await readTranscript('native', directory.path, recorder.file);
    // Appends made without waiting still land in call order.
    expect(
      session.messages.map((message) => (message.parts[0] as { text: string }).text.split(' ')[0]),
    ).toEqual(Array.from({ length: 60 }, (_, index) => String(index)));
  });

  it('refuses a message of the wrong shape and keeps the file as it was', async () => {
    const recorder = await createSessionRecorder({ sessionsDir: directory.path, id: 'strict' });
    await recorder.append({ role: 'user', content: 'hello' });
    const failure = await recorder
      .append({ role: 'robot' as 'user', content: 'beep' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TranscriptError);
    expect((failure as Error).message).toContain('role');
    const session = await readTranscript('native', directory.path, 'strict.json');
    expect(session.messageCount).toBe(1);
  });

  it('refuses appends after end, ids that are not file names, and an existing session file', async () => {
    const recorder = await createSessionRecorder({ sessionsDir: directory.path, id: 'once' });
    await recorder.end();
    await recorder.end();
    await expect(recorder.append({ role: 'user', content: 'late' })).rejects.toThrow(/has ended/);
    await expect(
      createSessionRecorder({ sessionsDir: directory.path, id: '../escape' }),
    ).rejects.toBeInstanceOf(ConfigError);
    await writeFile(join(directory.path, 'taken.json'), '{"messages":[]}');
    await expect(createSessionRecorder({ sessionsDir: directory.path, id: 'taken' })).rejects.toThrow(
      /already exists/,
    );
    expect(await readFile(join(directory.path, 'taken.json'), 'utf8')).toBe('{"messages":[]}');
  });

  it('names a session by its start time when no id is given', async () => {
    const recorder = await createSessionRecorder({
      sessionsDir: directory.path,
      now: () => new Date('2026-11-26T10:15:00Z'),
    });
    expect(recorder.id).toMatch(/^20261126-101500-[0-9a-f]{4}$/);
    expect(recorder.file).toBe(join(directory.path, `${recorder.id}.json`));
  });
});
