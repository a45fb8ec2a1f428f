import { describe, expect, it } from 'vitest';
import { chatProviderFromConfig } from '../../src/agent/memory-agent.js';
import { ModelError } from '../../src/errors.js';
import { deferredProvider, type DeferredShape } from '../../src/model/deferred-provider.js';
import type { ChatRequest, ModelProvider } from '../../src/model/types.js';

const request: ChatRequest = {
  system: [],
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  maxTokens: 16,
};

const HAIKU: DeferredShape = {
  label: 'anthropic:claude-haiku-5-5',
  contextWindow: 200_000,
  compactsServerSide: false,
  clearsToolResults: true,
  serverTools: true,
  countsTokens: true,
  batches: true,
  costOf: () => undefined,
};

const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };

function loadedProvider(): ModelProvider {
  const notUsed = () => Promise.reject(new Error('not used'));
  const { countsTokens: _counts, batches: _batches, ...shape } = HAIKU;
  return {
    ...shape,
    generateObject: notUsed,
    generateText: () => Promise.resolve({ value: 'text', usage, attempts: 1 }),
    chat: () =>
      Promise.resolve({
        content: [{ type: 'text', text: 'hello', citations: null }],
        stopReason: 'end_turn',
        usage,
        attempts: 1,
      }),
    countTokens: () => Promise.resolve(42),
  };
}

/** A deferred Claude Haiku 5.5 provider whose `load` is told which load it is (1, 2 …); counts its loads. */
function deferredHaiku(load: (attempt: number) => Promise<ModelProvider>): {
  provider: ModelProvider;
  readonly loads: number;
} {
  let loads = 0;
  const provider = deferredProvider(HAIKU, () => {
    loads += 1;
    return load(loads);
  });
  return {
    provider,
    get loads() {
      return loads;
    },
  };
}

describe('deferredProvider', () => {
  it('loads the provider at its first call and only once, for chat and structured calls alike', async () => {
    const deferred = deferredHaiku(() => Promise.resolve(loadedProvider()));
    const provider = deferred.provider;
    expect(deferred.loads).toBe(0);
    expect(provider.label).toBe('anthropic:claude-haiku-5-5');
    const [first, second] = await Promise.all([provider.chat(request), provider.chat(request)]);
    expect(first.content).toEqual(second.content);
    expect(await provider.countTokens?.(request)).toBe(42);
    expect((await provider.generateText({ system: 's', prompt: 'p' })).value).toBe('text');
    expect(deferred.loads).toBe(1);
  });

  it('tries the load again at the next call after a failed one', async () => {
    const deferred = deferredHaiku((load) =>
      load === 1 ? Promise.reject(new Error('no SDK')) : Promise.resolve(loadedProvider()),
    );
    const provider = deferred.provider;
    await expect(provider.chat(request)).rejects.toThrow('no SDK');
    await expect(provider.chat(request)).resolves.toMatchObject({ stopReason: 'end_turn' });
    expect(deferred.loads).toBe(2);
  });

  it('has no countTokens and no batches when the provider table says it has none', () => {
    const provider = deferredProvider(
      { ...HAIKU, label: 'openai-compatible:llama3.2', countsTokens: false, batches: false },
      () => Promise.reject(new Error('never loaded')),
    );
    expect('countTokens' in provider).toBe(false);
    expect(provider.batches).toBeUndefined();
  });
});

describe('chatProviderFromConfig', () => {
  it('builds providers whose shape is known before the SDK loads', () => {
    const anthropic = chatProviderFromConfig({
      model: {
        provider: 'anthropic',
        name: 'claude-haiku-5-5',
        apiKey: 'sk-ant-test',
        timeoutMs: 1_000,
        maxRetries: 0,
      },
    } as Parameters<typeof chatProviderFromConfig>[0]);
    expect(anthropic.label).toBe('anthropic:claude-haiku-5-5');
    expect(anthropic.clearsToolResults).toBe(true);
    expect('countTokens' in anthropic).toBe(true);
    const local = chatProviderFromConfig({
      model: { provider: 'openai-compatible', name: 'llama3.2', baseUrl: 'http://127.0.0.1:9/v1' },
    } as Parameters<typeof chatProviderFromConfig>[0]);
    expect(local.contextWindow).toBe(8_192);
    expect('countTokens' in local).toBe(false);
    expect(() =>
      chatProviderFromConfig({
        model: { provider: 'anthropic', name: 'claude-haiku-5-5', timeoutMs: 1_000, maxRetries: 0 },
      } as Parameters<typeof chatProviderFromConfig>[0]),
    ).toThrow(ModelError);
  });
});
