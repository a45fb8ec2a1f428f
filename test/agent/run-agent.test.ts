import Anthropic from '@anthropic-ai/sdk';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  runAgent,
  type AgentEvent,
  type RunAgentOptions,
  type RunAgentResult,
} from '../../src/agent/run-agent.js';
import { defineTool } from '../../src/agent/tool.js';
import { ModelError } from '../../src/errors.js';
import { createSessionRecorder } from '../../src/transcripts/session-recorder.js';
import { faults, type FakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { tempDirRemovedAfterTest, useFakeAnthropic } from '../support/fixtures.js';

const fake = useFakeAnthropic({ scope: 'all' });
let client: Anthropic;

beforeAll(async () => {
  client = new Anthropic({ apiKey: 'test-key', baseURL: fake.url, maxRetries: 0 });
});
afterEach(() => {
  expect(fake.server.pending).toBe(0); // every scripted reply was used
  fake.server.requests.length = 0;
  fake.server.setDefault(undefined);
  calls.splice(0);
});

const calls: string[] = [];
const weather = defineTool({
  name: 'weather',
  description: 'Weather of a city.',
  input: z.object({ city: z.string() }),
  run: async ({ city }) => {
    calls.push(city);
    return `Sunny in ${city}`;
  },
});
const broken = defineTool({
  name: 'broken',
  description: 'Always fails.',
  input: z.object({}),
  run: async () => {
    throw new Error('disk on fire');
  },
});

/** runAgent on the fake server as Claude Haiku 5.5, system prompt `s`, from the user's `prompt`; `options` over that. */
function ask(prompt: string, options: Partial<RunAgentOptions> = {}): Promise<RunAgentResult> {
  return runAgent({
    client,
    model: 'claude-haiku-5-5',
    system: 's',
    messages: [{ role: 'user', content: prompt }],
    ...options,
  });
}

function toolResults(request: FakeAnthropicServer['requests'][number]): unknown[] {
  const last = request.body.messages.at(-1)!;
  return Array.isArray(last.content) ? last.content : [];
}

describe('runAgent against the fake Messages API', () => {
  it('answers a tool_use with a tool_result carrying the same id, then returns the final text', async () => {
    fake.server.enqueue(
      {
        toolUse: [
          { name: 'weather', input: { city: 'Lisbon' }, id: 'toolu_A1' },
          { name: 'weather', input: { city: 'Porto' }, id: 'toolu_B2' },
        ],
      },
      { text: 'Sunny in both.' },
    );
    const events: AgentEvent[] = [];
    const result = await ask('Weather?', {
      system: 'You are helpful.',
      tools: [weather],
      contextManagement: 'client',
      onEvent: (event) => events.push(event),
    });
    expect(result.text).toBe('Sunny in both.');
    expect(result.stopReason).toBe('end_turn');
    expect(result.turns).toBe(2);
    expect(calls.splice(0)).toEqual(['Lisbon', 'Porto']);
    expect(toolResults(fake.server.requests[1]!)).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_A1', content: 'Sunny in Lisbon' },
      { type: 'tool_result', tool_use_id: 'toolu_B2', content: 'Sunny in Porto' },
    ]);
    expect(fake.server.requests[0]!.body.tools?.map((tool) => tool.name)).toEqual(['weather']);
    expect(fake.server.requests[0]!.system).toBe('You are helpful.');
    expect(result.messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(events.filter((event) => event.type === 'tool-call')).toHaveLength(2);
  });

  it('answers an unknown tool and a throwing tool with is_error results and carries on', async () => {
    fake.server.enqueue(
      {
        toolUse: [
          { name: 'teleport', input: {}, id: 'toolu_X' },
          { name: 'broken', input: {}, id: 'toolu_Y' },
        ],
      },
      { toolUse: [{ name: 'weather', input: { town: 'no city field' }, id: 'toolu_Z' }] },
      { text: 'Sorry, my tools failed.' },
    );
    const result = await ask('go', { tools: [weather, broken], contextManagement: 'client' });
    expect(result.text).toBe('Sorry, my tools failed.');
    const [unknown, throwing] = toolResults(fake.server.requests[1]!) as Array<Record<string, unknown>>;
    expect(unknown).toMatchObject({
      tool_use_id: 'toolu_X',
      is_error: true,
      content: expect.stringMatching(/Unknown tool "teleport".*weather, broken/),
    });
    expect(throwing).toMatchObject({
      tool_use_id: 'toolu_Y',
      is_error: true,
      content: 'Error: disk on fire',
    });
    expect(toolResults(fake.server.requests[2]!)[0]).toMatchObject({
      tool_use_id: 'toolu_Z',
      is_error: true,
      content: expect.stringMatching(/Invalid input for weather/),
    });
  });

  it('stops at the turn limit with the tool results recorded', async () => {
    fake.server.setDefault({ toolUse: [{ name: 'weather', input: { city: 'Faro' } }] });
    const result = await ask('loop', { tools: [weather], maxTurns: 3, contextManagement: 'client' });
    expect(result.stopReason).toBe('max_turns');
    expect(result.turns).toBe(3);
    expect(fake.server.requests).toHaveLength(3);
    expect(result.messages.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'tool_result' }] });
  });

  it('records every message of the session through the recorder', async () => {
    const sessionsDir = tempDirRemovedAfterTest('run-agent');
    const recorder = await createSessionRecorder({ sessionsDir, id: 'chat-1', agent: 'test' });
    fake.server.enqueue(
      { toolUse: [{ name: 'weather', input: { city: 'Braga' }, id: 'toolu_R' }] },
      { text: 'Sunny.' },
    );
    await ask('Braga?', { tools: [weather], recorder, contextManagement: 'client' });
    await recorder.end();
    const file = JSON.parse(await readFile(path.join(sessionsDir, 'chat-1.json'), 'utf8')) as {
      messages: Array<{ role: string; content: unknown }>;
      endedAt?: string;
    };
    expect(file.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(file.messages[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_R', content: 'Sunny in Braga' },
    ]);
    expect(file.endedAt).toBeDefined();
  });

  it('prefers native context management for Claude models, without compaction for Haiku', async () => {
    fake.server.enqueue({ text: 'ok' }, { text: 'ok' });
    await ask('hi');
    await ask('hi', { model: 'claude-sonnet-5-5' });
    const [haiku, sonnet] = fake.server.requests;
    expect(haiku!.headers['anthropic-beta']).toBe('context-management-2025-06-27');
    expect((haiku!.body as Record<string, unknown>).context_management).toEqual({
      edits: [
        {
          type: 'clear_tool_uses_20250919',
          trigger: { type: 'input_tokens', value: 100_000 },
          keep: { type: 'tool_uses', value: 3 },
        },
      ],
    });
    expect(sonnet!.headers['anthropic-beta']).toContain('compact-2026-01-12');
  });

  it('clears old tool results client-side, keeping the last one whole', async () => {
    fake.server.setDefault((request) =>
      request.body.messages.length < 12
        ? { toolUse: [{ name: 'weather', input: { city: 'x'.repeat(200) } }] }
        : { text: 'done' },
    );
    const result = await ask('long task', {
      tools: [weather],
      contextManagement: 'client',
      maxTurns: 8,
      keepToolResults: 1,
    });
    expect(result.text).toBe('done');
    const last = fake.server.requests.at(-1)!.body.messages;
    const results = last
      .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
      .filter((block) => block.type === 'tool_result');
    expect(results.slice(0, -1).every((block) => String(block.content).startsWith('[cleared'))).toBe(true);
    expect(String(results.at(-1)!.content)).toMatch(/^Sunny in x+/);
    // Full history is returned untrimmed.
    expect(result.messages.filter((message) => message.role === 'user')).toHaveLength(result.turns);
  });

  it('turns an API failure into a ModelError', async () => {
    fake.server.enqueue(faults.status(401));
    await expect(ask('hi')).rejects.toBeInstanceOf(ModelError);
  });
});
