import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Session } from '../../src/transcripts/types.js';
import { writeWithMtime, readTranscript } from './helpers.js';
import { useTempDir } from '../support/fixtures.js';

const STARTED_AT = '2026-11-20T10:00:00Z';

describe('native reader', () => {
  const directory = useTempDir('native');

  async function readDocument(name: string, document: unknown, fromMessage?: number): Promise<Session> {
    await writeFile(join(directory.path, name), JSON.stringify(document));
    return readTranscript('native', directory.path, name, { fromMessage });
  }

  /** Reads a document of just these messages, started at STARTED_AT. */
  function readMessages(name: string, messages: unknown[], fromMessage?: number): Promise<Session> {
    return readDocument(name, { startedAt: STARTED_AT, messages }, fromMessage);
  }

  it('reads Anthropic-shaped messages: strings, text, thinking, tool_use, tool_result, images', async () => {
    const session = await readDocument('a.json', {
      id: 'anthropic-1',
      startedAt: STARTED_AT,
      endedAt: '2026-11-20T10:30:00Z',
      agent: 'shop-assistant',
      messages: [
        { role: 'user', content: 'What is in my cart?', ts: '2026-11-20T10:00:01Z' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'look it up', signature: 'sig' },
            { type: 'redacted_thinking', data: 'xyz' },
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'tu1', name: 'get_cart', input: { user: 'ana' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'tu1',
              is_error: true,
              content: [
                { type: 'text', text: 'cart service down' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
              ],
            },
            { type: 'image', source: { type: 'url', url: 'https://example.test/x.png' } },
          ],
        },
      ],
    });
    expect(session).toMatchObject({
      id: 'anthropic-1',
      format: 'native',
      startedAt: STARTED_AT,
      endedAt: '2026-11-20T10:30:00Z',
      agent: 'shop-assistant',
      messageCount: 3,
      warnings: [],
    });
    expect(session.file).toBe(join(directory.path, 'a.json'));
    expect(session.messages).toEqual([
      {
        index: 0,
        role: 'user',
        ts: '2026-11-20T10:00:01Z',
        parts: [{ kind: 'text', text: 'What is in my cart?' }],
      },
      {
        index: 1,
        role: 'assistant',
        ts: undefined,
        parts: [
          { kind: 'thinking', text: 'look it up' },
          { kind: 'text', text: 'Checking.' },
          { kind: 'tool-call', id: 'tu1', name: 'get_cart', input: { user: 'ana' } },
        ],
      },
      {
        index: 2,
        role: 'user',
        ts: undefined,
        parts: [
          { kind: 'tool-result', toolCallId: 'tu1', text: 'cart service down\n[image]', isError: true },
          { kind: 'text', text: '[image]' },
        ],
      },
    ]);
  });

  it('reads OpenAI-shaped messages: system, tool_calls with JSON arguments, tool results, text parts', async () => {
    const session = await readMessages('openai.json', [
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Porto?' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Porto"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '14°C, rain' },
      { role: 'assistant', content: 'It is 14°C and raining.' },
    ]);
    expect(session.id).toBe('openai');
    expect(session.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(session.messages[2]?.parts).toEqual([
      { kind: 'tool-call', id: 'call_1', name: 'weather', input: { city: 'Porto' } },
    ]);
    expect(session.messages[3]?.parts).toEqual([
      { kind: 'tool-result', toolCallId: 'call_1', text: '14°C, rain', isError: false },
    ]);
    expect(session.messages[1]?.parts).toEqual([{ kind: 'text', text: 'Weather in Porto?' }]);
  });

  it('keeps tool arguments that are not JSON as text, with a warning', async () => {
    const session = await readMessages('args.json', [
      { role: 'assistant', tool_calls: [{ id: 'c', function: { name: 'f', arguments: '{not json' } }] },
    ]);
    expect(session.messages[0]?.parts).toEqual([
      { kind: 'tool-call', id: 'c', name: 'f', input: '{not json' },
    ]);
    expect(session.warnings).toEqual([
      'messages.0.tool_calls.0: arguments of tool call "f" are not JSON; kept as text',
    ]);
  });

  it('skips unknown block types with a warning instead of failing', async () => {
    const session = await readMessages('unknown.json', [
      {
        role: 'assistant',
        content: [
          { type: 'server_tool_use', id: 'x' },
          { type: 'text', text: 'kept' },
        ],
      },
    ]);
    expect(session.messages[0]?.parts).toEqual([{ kind: 'text', text: 'kept' }]);
    expect(session.warnings).toEqual(['messages.0.content.0: unknown block type "server_tool_use" skipped']);
  });

  it('takes startedAt from the first message, else from the file mtime', async () => {
    const withTs = await readDocument('ts.json', {
      messages: [{ role: 'user', content: 'hi', ts: '2026-11-21T08:00:00Z' }],
    });
    expect(withTs.startedAt).toBe('2026-11-21T08:00:00Z');
    const mtime = new Date('2026-11-22T09:30:00.000Z');
    await writeWithMtime(
      join(directory.path, 'bare.json'),
      JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }),
      mtime,
    );
    const bare = await readTranscript('native', directory.path, 'bare.json');
    expect(bare.startedAt).toBe(mtime.toISOString());
    expect(bare.endedAt).toBeUndefined();
  });

  it('returns the messages from fromMessage on and counts them all', async () => {
    const messages = Array.from({ length: 5 }, (_, index) => ({
      role: index % 2 === 0 ? 'user' : 'assistant',
      content: `m${index}`,
    }));
    const session = await readMessages('five.json', messages, 3);
    expect(session.messageCount).toBe(5);
    expect(session.messages.map((message) => message.index)).toEqual([3, 4]);
  });

  it('reports a wrong shape with the zod path of the bad field', async () => {
    const failure = await readMessages('bad.json', [
      { role: 'user', content: 'ok' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'x' }] },
    ]).catch((error: unknown) => error);
    expect(failure).toMatchObject({ reason: 'wrong-shape', file: join(directory.path, 'bad.json') });
    expect((failure as Error).message).toContain('messages.1.content.0.name');
  });
});
