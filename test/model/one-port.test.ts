import { describe, expect, it, onTestFinished } from 'vitest';
import { chatProviderFromConfig } from '../../src/agent/memory-agent.js';
import { ModelConfig } from '../../src/config/schema.js';
import { ModelError } from '../../src/errors.js';
import { costMeterOf } from '../../src/model/cost-meter.js';
import { createModel, resolveModel } from '../../src/model/create-model.js';
import { rateGateFor } from '../../src/model/rate-gate.js';
import type { ChatRequest } from '../../src/model/types.js';
import { startFakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { faults } from '../../harness/fake-model-server.js';
import { startFakeOpenAIServer } from '../../harness/fake-openai-server.js';
import { eventually } from '../support/eventually.js';
import { answer, request } from './helpers.js';

// The agent's chat calls and consolidation's structured calls are two methods of one provider: built the way
// `dreamd chat` builds its model (chatProviderFromConfig) and the way the daemon builds its own (createModel),
// from one config, they wait at the same gate and retry alike.

const chatRequest: ChatRequest = {
  system: [{ text: 'You are helpful.', cache: true }],
  messages: [{ role: 'user', content: 'hello' }],
  tools: [],
  maxTokens: 64,
};

const cases = [
  {
    provider: 'Anthropic',
    start: () => startFakeAnthropicServer(),
    config: { provider: 'anthropic' as const, name: 'claude-haiku-5-5' },
  },
  {
    provider: 'OpenAI-compatible',
    start: () => startFakeOpenAIServer(),
    config: { provider: 'openai-compatible' as const, name: 'qwen3:8b' },
  },
];

async function setUp(testCase: (typeof cases)[number], key: string, concurrency: number) {
  const server = await testCase.start();
  onTestFinished(() => server.close());
  const model = ModelConfig.parse({
    ...testCase.config,
    baseUrl: server.url,
    apiKey: key,
    concurrency,
    maxRetries: 2,
  });
  return {
    server,
    consolidation: createModel(model, { retryBaseDelayMs: 1 }),
    chat: chatProviderFromConfig({ model, embeddings: undefined }),
    gate: rateGateFor(server.url, key, concurrency),
  };
}

describe.each(cases)('one model port ($provider)', (testCase) => {
  it('holds chat calls and structured calls to one concurrency cap', async () => {
    const { server, consolidation, chat } = await setUp(testCase, `${testCase.provider}-cap`, 1);
    server.setLatency(40);
    server.setDefault({ json: answer });
    await Promise.all([
      consolidation.generateObject(request),
      chat.chat(chatRequest),
      consolidation.generateObject(request),
      chat.chat(chatRequest),
    ]);
    const arrivals = server.requests.map((received) => received.receivedAt).sort((a, b) => a - b);
    expect(arrivals).toHaveLength(4);
    // One at a time: each request reached the server only after the one before had its answer (40 ms later).
    for (let index = 1; index < arrivals.length; index += 1) {
      expect(arrivals[index]! - arrivals[index - 1]!).toBeGreaterThanOrEqual(35);
    }
  });

  it('pauses chat calls for the retry-after a structured call met', async () => {
    const key = `${testCase.provider}-pause`;
    const { server, consolidation, chat, gate } = await setUp(testCase, key, 4);
    server.enqueue(faults.rateLimited(0.4));
    server.setDefault({ json: answer });
    const structured = consolidation.generateObject(request);
    await eventually(() => gate.pausedUntil > Date.now(), 5_000, 'the key to pause', 2);
    const answered = await chat.chat(chatRequest);
    expect((await structured).attempts).toBe(2);
    expect(answered.attempts).toBe(1);
    const [limited, ...later] = server.requests;
    expect(later).toHaveLength(2);
    for (const request of later) expect(request.receivedAt - limited!.receivedAt).toBeGreaterThanOrEqual(390);
  });

  it('retries an overloaded answer and never a bad request, for both kinds of call', async () => {
    const { server, consolidation, chat } = await setUp(testCase, `${testCase.provider}-retry`, 4);
    server.enqueue(faults.overloaded(), { json: answer });
    expect((await consolidation.generateObject(request)).attempts).toBe(2);
    server.enqueue(faults.overloaded(), { json: answer });
    expect((await chat.chat(chatRequest)).attempts).toBe(2);

    server.enqueue(faults.badRequest('no such field'));
    const structuredError = await consolidation.generateObject(request).catch((error: unknown) => error);
    server.enqueue(faults.badRequest('no such field'));
    const chatError = await chat.chat(chatRequest).catch((error: unknown) => error);
    for (const error of [structuredError, chatError]) {
      expect(error).toBeInstanceOf(ModelError);
      expect(error).toMatchObject({ retryable: false, status: 400 });
    }
    expect(server.requests).toHaveLength(6);
  });

  it('prices chat calls and structured calls with one meter', () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const model = ModelConfig.parse({
      ...testCase.config,
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'k',
      price: { inputPerMTok: 0.2, outputPerMTok: 1 },
    });
    const chat = chatProviderFromConfig({ model, embeddings: undefined });
    expect(chat.costOf?.(usage)).toBeCloseTo(0.2);
    expect(createModel(model).costOf(usage, { batch: true })).toBeCloseTo(0.1);
  });

  it('has one cost meter per model: the provider, its adapter and a run read the same', () => {
    const model = ModelConfig.parse({ ...testCase.config, baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k' });
    const resolved = resolveModel(model);
    expect(createModel(model)).toHaveProperty('costOf', resolved.costOf);
    expect(costMeterOf(model)).toBe(resolved.costOf);
    expect(createModel({ ...model, price: { inputPerMTok: 0.2, outputPerMTok: 1 } })).not.toHaveProperty(
      'costOf',
      resolved.costOf,
    );
    expect(costMeterOf({ ...model, price: { inputPerMTok: 0.2, outputPerMTok: 1 } })).not.toBe(
      resolved.costOf,
    );
  });
});
