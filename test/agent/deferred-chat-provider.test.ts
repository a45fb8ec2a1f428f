import { describe, expect, it } from 'vitest';
import {
  anthropicProviderShape,
  deferredChatProvider,
  type ChatProvider,
  type ChatRequest,
} from '../../src/agent/chat-provider.js';
import { chatProviderFromConfig } from '../../src/agent/memory-agent.js';
import { openAIProviderShape } from '../../src/agent/openai-chat-provider.js';
import { ModelError } from '../../src/errors.js';

const request: ChatRequest = {
  system: [],
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  maxTokens: 16,
};

function loadedProvider(): ChatProvider {
  return {
    ...anthropicProviderShape({ model: 'claude-haiku-5-5' }),
    send: () =>
      Promise.resolve({
        content: [{ type: 'text', text: 'hello', citations: null }],
        stopReason: 'end_turn',
        usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
      }),
    countTokens: () => Promise.resolve(42),
  };
}

/** A deferred Claude Haiku 5.5 provider whose `load` is told which load it is (1, 2 …); counts its loads. */
function deferredHaiku(load: (attempt: number) => Promise<ChatProvider>): {
  provider: ChatProvider;
  readonly loads: number;
} {
  let loads = 0;
  const provider = deferredChatProvider(
    anthropicProviderShape({ model: 'claude-haiku-5-5' }),
    () => {
      loads += 1;
      return load(loads);
    },
    true,
  );
  return {
    provider,
    get loads() {
      return loads;
    },
  };
}

describe('deferredChatProvider', () => {
  it('loads the provider at its first call and only once', async () => {
    const deferred = deferredHaiku(() => Promise.resolve(loadedProvider()));
    const provider = deferred.provider;
    expect(deferred.loads).toBe(0);
    expect(provider.label).toBe('anthropic:claude-haiku-5-5');
    const [first, second] = await Promise.all([provider.send(request), provider.send(request)]);
    expect(first.content).toEqual(second.content);
    expect(await provider.countTokens?.(request)).toBe(42);
    expect(deferred.loads).toBe(1);
  });

  it('tries the load again at the next call after a failed one', async () => {
    const deferred = deferredHaiku((load) =>
      load === 1 ? Promise.reject(new Error('no SDK')) : Promise.resolve(loadedProvider()),
    );
    const provider = deferred.provider;
    await expect(provider.send(request)).rejects.toThrow('no SDK');
    await expect(provider.send(request)).resolves.toMatchObject({ stopReason: 'end_turn' });
    expect(deferred.loads).toBe(2);
  });

  it('has no countTokens when the loaded provider will have none', () => {
    const provider = deferredChatProvider(
      openAIProviderShape({ model: 'llama3.2' }),
      () => Promise.reject(new Error('never loaded')),
      false,
    );
    expect('countTokens' in provider).toBe(false);
    expect(provider.contextWindow).toBe(8_192);
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
    expect(() =>
      chatProviderFromConfig({
        model: { provider: 'anthropic', name: 'claude-haiku-5-5', timeoutMs: 1_000, maxRetries: 0 },
      } as Parameters<typeof chatProviderFromConfig>[0]),
    ).toThrow(ModelError);
  });
});
