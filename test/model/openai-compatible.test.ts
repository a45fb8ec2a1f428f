import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOpenAICompatibleModel } from '../../src/model/sdk-models.js';
import type { ModelConfigInput } from '../../src/model/provider-options.js';
import {
  faults,
  hashedBagOfWords,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../harness/fake-openai-server.js';
import { answer, openAICompatible, rejection, request } from './helpers.js';

const greeting = { system: 'Be brief.', prompt: 'Hi' };

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = await startFakeOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

const model = (overrides: Partial<ModelConfigInput> = {}) =>
  openAICompatible.model(server.url, { timeoutMs: 2_000, maxRetries: 3, ...overrides });

describe('createOpenAICompatibleModel', () => {
  it('returns the validated object with usage, asking for a strict json_schema', async () => {
    server.enqueue({
      json: answer,
      usage: { inputTokens: 80, outputTokens: 20, cacheReadTokens: 40, cacheWriteTokens: 0 },
    });

    const result = await model({ apiKey: 'sk-local' }).generateObject(request);

    expect(result).toEqual({
      value: answer,
      usage: { inputTokens: 80, outputTokens: 20, cacheReadTokens: 40, cacheWriteTokens: 0 },
      attempts: 1,
    });
    const sent = server.requests[0];
    expect(sent?.headers['authorization']).toBe('Bearer sk-local');
    expect(sent?.body.model).toBe('qwen3:8b');
    expect(sent?.system).toBe(request.system);
    expect(sent?.prompt).toBe(request.prompt);
    expect(sent?.body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'facts', strict: true, schema: { type: 'object', required: ['facts'] } },
    });
  });

  it('reports the prefix-cached system prompt as cache reads on the second call', async () => {
    server.setDefault({ json: answer });
    const provider = model();

    const first = await provider.generateObject(request);
    const second = await provider.generateObject(request);

    expect(first.usage.cacheReadTokens).toBe(0);
    expect(second.usage.cacheReadTokens).toBeGreaterThan(0);
    expect(second.usage.inputTokens + second.usage.cacheReadTokens).toBe(
      first.usage.inputTokens + first.usage.cacheWriteTokens,
    );
  });

  it('asks for no response_format when it generates text', async () => {
    server.enqueue({ text: 'Hello.' });

    const result = await model().generateText(greeting);

    expect(result.value).toBe('Hello.');
    expect(server.requests[0]?.body.response_format).toBeUndefined();
  });

  it('refuses to start without a base URL, naming the variable', () => {
    expect(() =>
      createOpenAICompatibleModel({ provider: 'openai-compatible', name: 'qwen3:8b' }, { env: {} }),
    ).toThrow(
      expect.objectContaining({
        details: { kind: 'missing-credentials', retryable: false },
        message: expect.stringContaining('DREAMD_MODEL_BASE_URL') as unknown,
      }) as Error,
    );
  });
});

describe('OpenAI-compatible endpoints', () => {
  it('calls OPENAI_BASE_URL with OPENAI_API_KEY when model.baseUrl is unset', async () => {
    server.enqueue({ text: 'Hello.' });

    const result = await createOpenAICompatibleModel(
      { provider: 'openai-compatible', name: 'llama3.2' },
      { env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'sk-from-env' } },
    ).generateText(greeting);

    expect(result.value).toBe('Hello.');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-from-env');
  });

  it("accepts a local model's JSON after a <think> block and inside a ```json fence", async () => {
    server.enqueue({
      text:
        '<think>\nThe session says Ollama runs qwen3.\n</think>\n\n```json\n' +
        JSON.stringify(answer) +
        '\n```',
    });

    const result = await model().generateObject(request);

    expect(result.value).toEqual(answer);
    expect(result.attempts).toBe(1);
  });

  it('says to add /v1 when a base URL without it answers 404', async () => {
    const withoutVersion = server.url.replace(/\/v1$/, '');

    const error = await rejection(
      model({ name: 'llama3.2', baseUrl: withoutVersion, maxRetries: 0 }).generateText(greeting),
    );

    expect(error.status).toBe(404);
    expect(error.message).toContain(`add /v1 (e.g. ${withoutVersion}/v1)`);
  });

  it('gives no /v1 advice for a 404 from a base URL that has it', async () => {
    server.enqueue(faults.status(404));

    const error = await rejection(model({ maxRetries: 0 }).generateText(greeting));

    expect(error.status).toBe(404);
    expect(error.message).not.toContain('add /v1');
  });
});

describe('fake OpenAI embeddings', () => {
  it('serves deterministic hashed bag-of-words vectors to the real SDK, base64 or float', async () => {
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: server.url, maxRetries: 0 });
    const texts = ['The user prefers pnpm', 'the user prefers using pnpm', 'Deploys run on Fridays'];

    const base64 = await client.embeddings.create({ model: 'nomic-embed-text', input: texts });
    const floats = await client.embeddings.create({
      model: 'nomic-embed-text',
      input: texts,
      encoding_format: 'float',
    });

    const vectors = base64.data.map((item) => item.embedding);
    expect(vectors[0]?.[0]).toBeCloseTo(hashedBagOfWords(texts[0]!)[0]!, 5);
    expect(floats.data[2]?.embedding).toEqual(hashedBagOfWords(texts[2]!));
    const similarity = (a: number[], b: number[]) =>
      a.reduce((sum, value, index) => sum + value * (b[index] ?? 0), 0);
    expect(similarity(vectors[0]!, vectors[1]!)).toBeGreaterThan(0.7);
    expect(similarity(vectors[0]!, vectors[2]!)).toBeLessThan(0.3);
    expect(server.embeddingRequests.map((sent) => sent.inputs)).toEqual([texts, texts]);
  });

  it('injects embeddings faults', async () => {
    const client = new OpenAI({ apiKey: 'sk-local', baseURL: server.url, maxRetries: 0 });
    server.enqueueEmbeddings(faults.rateLimited(1));

    const error: unknown = await client.embeddings
      .create({ model: 'm', input: 'x' })
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    await expect(client.embeddings.create({ model: 'm', input: 'x' })).resolves.toMatchObject({
      object: 'list',
    });
  });
});
