import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ModelError } from '../../src/errors.js';
import { takesEffort } from '../../src/model/anthropic.js';
import { createAnthropicModel } from '../../src/model/sdk-models.js';
import type { ModelConfigInput } from '../../src/model/provider-options.js';
import { faults } from '../../harness/fake-anthropic-server.js';
import { useFakeAnthropic } from '../support/fixtures.js';
import { answer, rejection, request } from './helpers.js';

const fake = useFakeAnthropic();

const model = (overrides: Partial<ModelConfigInput> = {}) =>
  createAnthropicModel(
    { apiKey: 'sk-ant-test-key', baseUrl: fake.url, timeoutMs: 2_000, maxRetries: 3, ...overrides },
    { retryBaseDelayMs: 1 },
  );

describe('the effort of an extraction call', () => {
  it('asks Claude Haiku 5.5 for low effort by default, the configured one when set, and leaves it to the model on null', async () => {
    const efforts: unknown[] = [];
    for (const overrides of [{}, { effort: 'high' as const }, { effort: null }]) {
      fake.server.enqueue({ json: answer });
      await model(overrides).generateObject(request);
      efforts.push(
        (fake.server.requests.at(-1)?.body.output_config as { effort?: unknown } | undefined)?.effort,
      );
    }
    expect(efforts).toEqual(['low', 'high', undefined]);
  });

  it('never sends the field to a model that does not take it', async () => {
    fake.server.enqueue({ json: answer });
    await model({ name: 'claude-haiku-4-5' }).generateObject(request);
    expect(fake.server.requests.at(-1)?.body.output_config).not.toHaveProperty('effort');
  });

  it.each([
    ['claude-haiku-5-5', true],
    ['claude-sonnet-5', true],
    ['claude-opus-4-5', true],
    ['claude-opus-4-1', false],
    ['claude-haiku-4-5-20251001', false],
  ])('knows whether %s takes an effort: %s', (name, takes) => {
    expect(takesEffort(name)).toBe(takes);
  });
});

describe('createAnthropicModel', () => {
  it('returns the validated object, the usage and one attempt', async () => {
    fake.server.enqueue({
      json: answer,
      usage: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 900, cacheWriteTokens: 0 },
    });

    const result = await model().generateObject(request);

    expect(result).toEqual({
      value: answer,
      usage: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 900, cacheWriteTokens: 0 },
      attempts: 1,
    });
    const [sent] = fake.server.requests;
    // SDK 1.14 sends the key as a bearer token; older versions used x-api-key.
    expect(sent?.headers['authorization'] ?? sent?.headers['x-api-key']).toContain('sk-ant-test-key');
    expect(sent?.headers['anthropic-version']).toBeDefined();
    expect(sent?.body.model).toBe('claude-haiku-5-5');
    expect(sent?.body.max_tokens).toBe(4096);
    expect(sent?.prompt).toBe(request.prompt);
    expect(sent?.body.output_config?.format?.type).toBe('json_schema');
    expect(sent?.body.output_config?.format?.schema).toMatchObject({ type: 'object', required: ['facts'] });
  });

  it('marks the system prompt for prompt caching and reports cache writes, then reads', async () => {
    fake.server.setDefault({ json: answer });
    const provider = model();

    const first = await provider.generateObject(request);
    const second = await provider.generateObject({ ...request, prompt: 'Another session.' });

    expect(fake.server.requests[0]?.body.system).toEqual([
      { type: 'text', text: request.system, cache_control: { type: 'ephemeral' } },
    ]);
    expect(first.usage.cacheWriteTokens).toBeGreaterThan(0);
    expect(first.usage.cacheReadTokens).toBe(0);
    expect(second.usage.cacheReadTokens).toBe(first.usage.cacheWriteTokens);
    expect(second.usage.cacheWriteTokens).toBe(0);
  });

  it('uses the configured model name and output limit', async () => {
    fake.server.enqueue({ json: answer });

    await model({ name: 'claude-haiku-4-5', maxOutputTokens: 1000 }).generateObject(request);
    fake.server.enqueue({ json: answer });
    await model({ name: 'claude-haiku-4-5' }).generateObject({ ...request, maxOutputTokens: 200 });

    expect(fake.server.requests.map((sent) => [sent.body.model, sent.body.max_tokens])).toEqual([
      ['claude-haiku-4-5', 1000],
      ['claude-haiku-4-5', 200],
    ]);
  });

  it('answers from a function of the request', async () => {
    fake.server.enqueue((sent) => ({
      json: { facts: [{ title: sent.prompt.includes('pnpm') ? 'pnpm' : 'other', type: 'user' }] },
    }));

    const result = await model().generateObject(request);

    expect(result.value.facts[0]?.title).toBe('pnpm');
  });

  it('waits as long as retry-after says', async () => {
    fake.server.enqueue(faults.rateLimited(0.25), { json: answer });
    const waits: unknown[] = [];
    const logger = { warn: (data: Record<string, unknown>) => void waits.push(data.delayMs) };

    await createAnthropicModel({ apiKey: 'k', baseUrl: fake.url, maxRetries: 3 }, { logger }).generateObject(
      request,
    );

    expect(waits).toEqual([250]);
  });

  it('prefers retry-after-ms over retry-after', async () => {
    fake.server.enqueue(faults.status(429, { retryAfterMs: 5, retryAfterSeconds: 30 }), { json: answer });
    const waits: unknown[] = [];
    const logger = { warn: (data: Record<string, unknown>) => void waits.push(data.delayMs) };

    const result = await createAnthropicModel(
      { apiKey: 'k', baseUrl: fake.url, maxRetries: 3 },
      { logger },
    ).generateObject(request);

    expect(result.attempts).toBe(2);
    expect(waits).toEqual([5]);
  });

  it('gives up at once when retry-after is longer than it will wait, and passes the wait on', async () => {
    fake.server.enqueue(faults.rateLimited(120), { json: answer });

    const error = await rejection(model().generateObject(request));

    expect(error.details).toMatchObject({
      kind: 'rate-limited',
      status: 429,
      retryable: true,
      retryAfterMs: 120_000,
    });
    expect(fake.server.requests).toHaveLength(1);
  });

  it('throws a retryable rate-limited ModelError when the retries run out', async () => {
    fake.server.setDefault(faults.rateLimited(0));

    const error = await rejection(model({ maxRetries: 2 }).generateObject(request));

    expect(error.details).toMatchObject({ kind: 'rate-limited', status: 429, retryable: true });
    expect(error.message).toMatch(/HTTP 429.*gave up after 3 attempts/);
    expect(fake.server.requests).toHaveLength(3);
  });

  it('throws an overloaded ModelError after repeated 529s', async () => {
    fake.server.setDefault(faults.overloaded());

    const error = await rejection(model({ maxRetries: 1 }).generateObject(request));

    expect(error.details).toMatchObject({ kind: 'overloaded', status: 529, retryable: true });
    expect(fake.server.requests).toHaveLength(2);
  });

  it.each([401, 403])('does not retry a %i and points at the API key', async (status) => {
    fake.server.enqueue(faults.status(status), { json: answer });

    const error = await rejection(model().generateObject(request));

    expect(error.details).toMatchObject({ kind: 'auth', status, retryable: false });
    expect(error.message).toContain('ANTHROPIC_API_KEY');
    expect(fake.server.requests).toHaveLength(1);
  });

  it('obeys x-should-retry: false on a 500', async () => {
    fake.server.enqueue(faults.status(500, { shouldRetry: false }), { json: answer });

    const error = await rejection(model().generateObject(request));

    expect(error.details).toMatchObject({ kind: 'server', status: 500, retryable: false });
    expect(fake.server.requests).toHaveLength(1);
  });

  it('fails with a connection ModelError when nothing listens', async () => {
    const url = fake.url;
    await fake.restart(); // nothing listens at the old URL

    const error = await rejection(model({ baseUrl: url, maxRetries: 1 }).generateObject(request));

    expect(error.details).toMatchObject({ kind: 'connection', retryable: true });
    expect(error.message).toContain(url);
  });

  it('counts the tokens of failed attempts that the server answered', async () => {
    fake.server.enqueue(
      { fault: 'bad-output' },
      {
        json: answer,
        usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
    );

    const result = await model().generateObject(request);

    expect(result.usage.inputTokens).toBeGreaterThan(100);
    expect(result.attempts).toBe(2);
  });

  it('validates the output with the caller schema once, so transforms apply once', async () => {
    const Doubled = z.object({ count: z.number().transform((count) => count * 2) });
    fake.server.enqueue({ json: { count: 21 } });

    const result = await model().generateObject({ ...request, schema: Doubled, schemaName: 'count' });

    expect(result.value).toEqual({ count: 42 });
    expect(fake.server.requests[0]?.body.output_config?.format?.schema).toMatchObject({
      type: 'object',
      properties: { count: { type: 'number' } },
    });
  });

  it('refuses a schema that has no JSON schema, without calling the model', async () => {
    const error = await rejection(
      model().generateObject({ ...request, schema: z.object({ at: z.date() }), schemaName: 'dated' }),
    );

    expect(error.details).toMatchObject({ kind: 'bad-request', retryable: false });
    expect(error.message).toContain('dated schema cannot be sent');
    expect(fake.server.requests).toHaveLength(0);
  });

  it('asks for no structured output when it generates text', async () => {
    fake.server.enqueue({ text: 'A short summary.' });

    await model().generateText({ system: 'Summarise.', prompt: 'Long text' });

    expect(fake.server.requests[0]?.body.output_config).toBeUndefined();
  });

  it('stops at once, with the abort reason, when the caller aborts', async () => {
    const controller = new AbortController();
    const reason = new Error('shutting down');
    fake.server.enqueue(() => {
      controller.abort(reason);
      return faults.hang();
    });

    const caught: unknown = await model({ timeoutMs: 10_000 })
      .generateObject({ ...request, signal: controller.signal })
      .catch((error: unknown) => error);

    expect(caught).toBe(reason);
    expect(fake.server.requests).toHaveLength(1);
  });

  it('serves the tool-use flow of the agent loop through withRetries', async () => {
    fake.server.enqueue(faults.overloaded(), {
      text: 'Let me look.',
      toolUse: [{ name: 'memory_view', input: { path: 'MEMORY.md' }, id: 'toolu_1' }],
    });
    fake.server.enqueue((sent) => ({ text: `The index says: ${sent.prompt}` }));
    const provider = model();
    const tools = [
      {
        name: 'memory_view',
        description: 'Read a memory file',
        input_schema: {
          type: 'object' as const,
          properties: { path: { type: 'string' } },
          required: ['path'],
        },
      },
    ];

    const first = await provider.withRetries((client, signal) =>
      client.messages.create(
        {
          model: 'claude-haiku-5-5',
          max_tokens: 500,
          tools,
          messages: [{ role: 'user', content: 'What do you know?' }],
        },
        signal ? { signal } : undefined,
      ),
    );
    const second = await provider.withRetries((client) =>
      client.messages.create({
        model: 'claude-haiku-5-5',
        max_tokens: 500,
        tools,
        messages: [
          { role: 'user', content: 'What do you know?' },
          { role: 'assistant', content: first.value.content },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: '- [Prefers pnpm](user.md#pnpm)' },
            ],
          },
        ],
      }),
    );

    expect(first.attempts).toBe(2);
    expect(first.value.stop_reason).toBe('tool_use');
    expect(first.value.content).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'toolu_1', name: 'memory_view', input: { path: 'MEMORY.md' } },
    ]);
    expect(fake.server.requests[1]?.body.tools).toHaveLength(1);
    expect(second.value.content).toEqual([
      { type: 'text', text: 'The index says: - [Prefers pnpm](user.md#pnpm)' },
    ]);
  });
});

describe('Anthropic credentials', () => {
  it('refuses to start without a key or an endpoint, and says which variable to set', () => {
    let caught: unknown;
    try {
      createAnthropicModel({ provider: 'anthropic' }, { env: {} });
    } catch (error) {
      caught = error;
    }

    expect(caught).toBeInstanceOf(ModelError);
    expect((caught as ModelError).details).toEqual({ kind: 'missing-credentials', retryable: false });
    expect((caught as ModelError).message).toContain('ANTHROPIC_API_KEY');
  });

  it('talks to a base URL without a key', async () => {
    fake.server.enqueue({ json: answer });

    const result = await createAnthropicModel({ baseUrl: fake.url }).generateObject(request);

    expect(result.value).toEqual(answer);
  });

  it('calls ANTHROPIC_BASE_URL with ANTHROPIC_API_KEY when model.baseUrl and model.apiKey are unset', async () => {
    fake.server.enqueue({ json: answer });

    const result = await createAnthropicModel(
      {},
      { env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-ant-from-env' } },
    ).generateObject(request);

    expect(result.value).toEqual(answer);
    expect(fake.server.requests[0]?.headers.authorization).toBe('Bearer sk-ant-from-env');
  });

  it('accepts structured output wrapped in a ```json fence', async () => {
    fake.server.enqueue({ text: '```json\n' + JSON.stringify(answer) + '\n```' });

    const result = await model().generateObject(request);

    expect(result.value).toEqual(answer);
    expect(result.attempts).toBe(1);
  });

  it('prefers model.baseUrl over ANTHROPIC_BASE_URL', async () => {
    fake.server.enqueue({ json: answer });

    const result = await createAnthropicModel(
      { baseUrl: fake.url, apiKey: 'k' },
      { env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:1' } },
    ).generateObject(request);

    expect(result.value).toEqual(answer);
  });

  it('sends ANTHROPIC_AUTH_TOKEN as the bearer token, not a made-up key', async () => {
    fake.server.enqueue({ json: answer });

    await createAnthropicModel(
      {},
      { env: { ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_AUTH_TOKEN: 'gateway-token' } },
    ).generateObject(request);

    expect(fake.server.requests[0]?.headers.authorization).toBe('Bearer gateway-token');
  });
});
