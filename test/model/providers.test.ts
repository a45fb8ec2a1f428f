import { describe, expect, it } from 'vitest';
import { OutputLimitError } from '../../src/model/output.js';
import { faults, type FakeFault } from '../../harness/fake-model-server.js';
import { answer, onFakeServer, providers, rejection, request } from './helpers.js';

// What both providers promise alike, each on its own fake server through its real SDK: one retry loop, one
// mapping of failures to ModelError kinds. What only one provider does is in anthropic.test.ts and
// openai-compatible.test.ts.

const quick = { timeoutMs: 2_000, maxRetries: 3 };

describe.each(providers)('the $provider provider', (provider) => {
  it.each<[string, FakeFault, number?]>([
    ['429 rate limit', faults.rateLimited(0)],
    ['429 with retry-after-ms', faults.status(429, { retryAfterMs: 10 })],
    ['529 overloaded', faults.overloaded()],
    ['500 server error', faults.serverError()],
    ['503 unavailable', faults.status(503)],
    ['a dropped connection', faults.drop()],
    ['output that breaks the schema', faults.badOutput()],
    ['output that is not JSON', faults.badOutput('Sure! Here are the facts: …')],
    ['an empty answer', faults.empty()],
    ['a refusal', faults.refusal()],
    ['a request that hangs past the timeout', faults.hang(), 150],
  ])('retries after %s and succeeds', async (_name, fault, timeoutMs = quick.timeoutMs) => {
    const { server, model } = await onFakeServer(provider, { ...quick, timeoutMs });
    server.enqueue(fault, { json: answer });

    const result = await model.generateObject(request);

    expect(result.value).toEqual(answer);
    expect(result.attempts).toBe(2);
    expect(server.requests).toHaveLength(2);
  });

  it('throws a retryable server ModelError when the retries run out', async () => {
    const { server, model } = await onFakeServer(provider, { ...quick, maxRetries: 2 });
    server.setDefault(faults.status(503));

    const error = await rejection(model.generateObject(request));

    expect(error.details).toMatchObject({ kind: 'server', status: 503, retryable: true });
    expect(error.message).toContain('gave up after 3 attempts');
    expect(server.requests).toHaveLength(3);
  });

  it('never resends a request whose answer was cut off at the output limit: a typed OutputLimitError', async () => {
    const { server, model } = await onFakeServer(provider, quick);
    server.enqueue(faults.maxTokens(), { json: answer });

    const error = await rejection(model.generateObject(request));

    expect(error).toBeInstanceOf(OutputLimitError);
    expect(error.details).toMatchObject({ kind: 'output-limit', retryable: false });
    expect(server.requests).toHaveLength(1);
  });

  it('reports the output limit of the request whose answer stopped there, not the configured one', async () => {
    const { server, model } = await onFakeServer(provider, quick);
    server.enqueue(faults.maxTokens());

    const error = await rejection(model.generateObject({ ...request, maxOutputTokens: 512 }));

    expect(error).toBeInstanceOf(OutputLimitError);
    expect((error as OutputLimitError).maxOutputTokens).toBe(512);
  });

  it('does not retry a 400 and passes on what the server said', async () => {
    const { server, model } = await onFakeServer(provider, quick);
    server.enqueue(faults.badRequest('max_tokens: must be at most 64000'), { json: answer });

    const error = await rejection(model.generateObject(request));

    expect(error.details).toMatchObject({ kind: 'bad-request', status: 400, retryable: false });
    expect(error.message).toContain('max_tokens: must be at most 64000');
    expect(error.message).toContain('the same request will fail again');
    expect(server.requests).toHaveLength(1);
  });

  it('fails with bad-output when every answer breaks the schema, within the same retry budget', async () => {
    const { server, model } = await onFakeServer(provider, { ...quick, maxRetries: 2 });
    server.setDefault(faults.badOutput({ facts: [{ title: '', type: 'opinion' }] }));

    const error = await rejection(model.generateObject(request));

    expect(error.details).toMatchObject({ kind: 'bad-output', retryable: true });
    expect(error.details.status).toBeUndefined();
    expect(error.message).toContain('does not match the facts schema');
    expect(error.message).toContain('facts.0.type');
    expect(server.requests).toHaveLength(3);
  });

  it('fails with a timeout ModelError when the server hangs past timeoutMs every time', async () => {
    const { server, model } = await onFakeServer(provider, { timeoutMs: 100, maxRetries: 1 });
    server.setDefault(faults.hang());

    const error = await rejection(model.generateObject(request));

    expect(error.details).toMatchObject({ kind: 'timeout', retryable: true });
    expect(error.details.status).toBeUndefined();
    expect(error.message).toContain('no answer within 100 ms');
    expect(server.requests).toHaveLength(2);
  });

  it('generates text with usage, without asking for structured output', async () => {
    const { server, model } = await onFakeServer(provider, quick);
    const usage = { inputTokens: 50, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 };
    server.enqueue({ text: 'A short summary.', usage });

    const result = await model.generateText({ system: 'Summarise.', prompt: 'Long text' });

    expect(result.value).toBe('A short summary.');
    expect(result.usage).toEqual(usage);
    expect(server.requests[0]?.system).toBe('Summarise.');
    expect(server.requests[0]?.prompt).toBe('Long text');
  });

  it('treats an empty text answer as bad output', async () => {
    const { server, model } = await onFakeServer(provider, { maxRetries: 0 });
    server.setDefault(faults.empty());

    const error = await rejection(model.generateText({ system: 'Summarise.', prompt: 'Long text' }));

    expect(error.details).toMatchObject({ kind: 'bad-output', retryable: true });
    expect(error.message).toContain('empty');
  });
});
