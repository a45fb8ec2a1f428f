import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Message } from '../../src/agent/context.js';
import { createOpenAIChatProvider } from '../../src/model/chat-providers.js';
import { toOpenAIMessages } from '../../src/model/openai-chat.js';
import { runAgent } from '../../src/agent/run-agent.js';
import { defineTool } from '../../src/agent/tool.js';
import { ModelError } from '../../src/errors.js';
import { faults, startFakeOpenAIServer, type FakeOpenAIServer } from '../../harness/fake-openai-server.js';

let server: FakeOpenAIServer;
let client: OpenAI;
beforeAll(async () => {
  server = await startFakeOpenAIServer();
  client = new OpenAI({ apiKey: 'k', baseURL: server.url, maxRetries: 0 });
});
afterAll(async () => {
  await server.close();
});

const weather = defineTool({
  name: 'weather',
  description: 'Weather of a city.',
  input: z.object({ city: z.string() }),
  run: async ({ city }) => `Sunny in ${city}`,
});

describe('the agent loop on an OpenAI-compatible endpoint', () => {
  it('runs two tool calls of one answer and sends each result with its tool_call_id', async () => {
    server.enqueue(
      {
        toolCalls: [
          { name: 'weather', arguments: { city: 'Lisbon' }, id: 'call_a' },
          { name: 'nope', arguments: {}, id: 'call_b' },
        ],
      },
      { text: 'Sunny in Lisbon.' },
    );
    const provider = createOpenAIChatProvider({ client, model: 'qwen3:4b' });
    const result = await runAgent({
      provider,
      system: 'You know the weather.',
      messages: [{ role: 'user', content: 'Weather in Lisbon?' }],
      tools: [weather],
    });
    expect(result).toMatchObject({ text: 'Sunny in Lisbon.', stopReason: 'end_turn', turns: 2 });
    const sent = server.requests[1]!.body.messages;
    expect(sent[0]).toEqual({ role: 'system', content: 'You know the weather.' });
    expect(sent.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_a', content: 'Sunny in Lisbon' },
      { role: 'tool', tool_call_id: 'call_b', content: expect.stringMatching(/^Error: Unknown tool "nope"/) },
    ]);
    expect(server.requests[0]!.body.tools).toEqual([
      {
        type: 'function',
        function: { name: 'weather', description: 'Weather of a city.', parameters: expect.any(Object) },
      },
    ]);
    // The history stays Anthropic-shaped: what the recorder stores and the context functions cut.
    expect(result.messages[1]!.content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'weather', input: { city: 'Lisbon' } },
      { type: 'tool_use', id: 'call_b', name: 'nope', input: {} },
    ]);
  });

  it('maps finish_reason length to max_tokens and a server error to a ModelError', async () => {
    const provider = createOpenAIChatProvider({ client, model: 'qwen3:4b' });
    server.enqueue({ text: 'cut', finishReason: 'length' });
    const cut = await runAgent({ provider, system: '', messages: [{ role: 'user', content: 'long' }] });
    expect(cut.stopReason).toBe('max_tokens');
    server.enqueue(faults.status(500));
    await expect(
      runAgent({ provider, system: '', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(ModelError);
  });

  it('translates text, tool calls and results, dropping thinking', () => {
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 's' },
          { type: 'text', text: 'let me look' },
          { type: 'tool_use', id: 't1', name: 'weather', input: { city: 'Porto' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'disk full', is_error: true },
          { type: 'text', text: 'and?' },
        ],
      },
    ];
    expect(toOpenAIMessages('', messages)).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: 'let me look',
        tool_calls: [
          { id: 't1', type: 'function', function: { name: 'weather', arguments: '{"city":"Porto"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 't1', content: 'Error: disk full' },
      { role: 'user', content: 'and?' },
    ]);
  });
});
