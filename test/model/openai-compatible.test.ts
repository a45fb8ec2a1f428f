import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ModelError } from '../../src/errors.js';
import { createOpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { OutputLimitError } from '../../src/model/output.js';
import type { ModelConfigInput } from '../../src/model/provider-options.js';
import {
  faults,
  hashedBagOfWords,
  startFakeOpenAIServer,
  type FakeFault,
  type FakeOpenAIServer,
} from '../../harness/fake-openai-server.js';

const Facts = z.object({
  facts: z.array(z.object({ title: z.string().min(1), type: z.enum(['user', 'project']) })),
});
const answer = { facts: [{ title: 'Uses Ollama locally', type: 'project' as const }] };
const request = {
  system: 'You extract facts worth keeping.',
  prompt: 'Session: we run qwen3 on Ollama for local work.',
  schema: Facts,
  schemaName: 'facts',
};

let server: FakeOpenAIServer;
beforeEach(async () => {
  server = await startFakeOpenAIServer();
});
afterEach(async () => {
  await server.close();
});

function model(overrides: Partial<ModelConfigInput> = {}) {
  return createOpenAICompatibleModel(
    {
      provider: 'openai-compatible',
      name: 'qwen3:8b',
      baseUrl: server.url,
      timeoutMs: 2_000,
      maxRetries: 3,
      ...overrides,
    },
    { retryBaseDelayMs: 1 },
  );
}

async function rejection(promise: Promise<unknown>): Promise<ModelError> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

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

  it.each<[string, FakeFault]>([
    ['429 with retry-after-ms', faults.status(429, { retryAfterMs: 10 })],
    ['500 server error', faults.serverError()],
    ['a dropped connection', faults.drop()],
    ['output that breaks the schema', faults.badOutput()],
    ['an empty answer', faults.empty()],
    ['a refusal', faults.refusal()],
  ])('retries after %s and succeeds', async (_name, fault) => {
    server.enqueue(fault, { json: answer });

    const result = await model().generateObject(request);

    expect(result.value).toEqual(answer);
    expect(result.attempts).toBe(2);
  });

  it('throws a retryable server ModelError when the retries run out', async () => {
    server.setDefault(faults.status(503));

    const error = await rejection(model({ maxRetries: 2 }).generateObject(request));

    expect(error.details).toMatchObject({ kind: 'server', status: 503, retryable: true });
    expect(server.requests).toHaveLength(3);
  });

  it('never resends a request whose answer stopped at finish_reason length: a typed OutputLimitError', async () => {
    server.enqueue(faults.maxTokens(), { json: answer });

    const error = await rejection(model().generateObject(request));

    expect(error).toBeInstanceOf(OutputLimitError);
    expect(error.details).toMatchObject({ kind: 'output-limit', retryable: false });
    expect(server.requests).toHaveLength(1);
  });

  it('does not retry a 400', async () => {
    server.enqueue(faults.badRequest('model "qwen3:8b" not found'), { json: answer });

    const error = await rejection(model().generateObject(request));

    expect(error.details).toMatchObject({ kind: 'bad-request', status: 400, retryable: false });
    expect(error.message).toContain('not found');
    expect(server.requests).toHaveLength(1);
  });

  it('fails with bad-output after the retry budget of schema-breaking answers', async () => {
    server.setDefault(faults.badOutput());

    const error = await rejection(model({ maxRetries: 1 }).generateObject(request));

    expect(error.details).toMatchObject({ kind: 'bad-output', retryable: true });
    expect(server.requests).toHaveLength(2);
  });

  it('times out a request that hangs', async () => {
    server.setDefault(faults.hang());

    const error = await rejection(model({ timeoutMs: 100, maxRetries: 0 }).generateObject(request));

    expect(error.details).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('generates text', async () => {
    server.enqueue({ text: 'Hello.' });

    const result = await model().generateText({ system: 'Be brief.', prompt: 'Hi' });

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
    ).generateText({ system: 'Be brief.', prompt: 'Hi' });

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
    const error = await createOpenAICompatibleModel(
      { provider: 'openai-compatible', name: 'llama3.2', baseUrl: withoutVersion, maxRetries: 0 },
      { env: {} },
    )
      .generateText({ system: 'Be brief.', prompt: 'Hi' })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );

    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).status).toBe(404);
    expect((error as ModelError).message).toContain(`add /v1 (e.g. ${withoutVersion}/v1)`);
  });

  it('gives no /v1 advice for a 404 from a base URL that has it', async () => {
    server.enqueue(faults.status(404));
    const error = await model({ maxRetries: 0 })
      .generateText({ system: 'Be brief.', prompt: 'Hi' })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );

    expect((error as ModelError).status).toBe(404);
    expect((error as ModelError).message).not.toContain('add /v1');
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
