import type Anthropic from '@anthropic-ai/sdk';
import type { NativeContextManagement } from './context-management.js';
import type { ChatRequest, SystemBlock } from './messages.js';
import type { RetryingCall } from './retry.js';
import type { ModelProvider } from './types.js';
import { usageOf } from './usage-of.js';

/**
 * The chat calls of the Anthropic provider: one turn of a conversation with tools through the Messages API,
 * with native context management for Claude models (the beta API), and the token-counting endpoint. Both go
 * through the provider's retrying call, so they wait at its rate gate and retry as its structured calls do.
 */

/**
 * Only the last `cache: true` block carries `cache_control` (Anthropic caches the prefix up to a marked
 * block: tools, then system blocks; one marker is enough and the API allows at most four).
 */
function systemBlocks(system: readonly SystemBlock[]): Anthropic.TextBlockParam[] {
  const lastCached = system.findLastIndex((block) => block.cache === true);
  return system
    .filter((block) => block.text !== '')
    .map((block) => ({
      type: 'text' as const,
      text: block.text,
      ...(block === system[lastCached] ? { cache_control: { type: 'ephemeral' as const } } : {}),
    }));
}

/** The input tokens a chat request will take, roughly (4 characters a token), for the key's pacing. */
function chatTokens(request: Omit<ChatRequest, 'maxTokens'>): number {
  const system = request.system.reduce((sum, block) => sum + block.text.length, 0);
  return Math.ceil((system + JSON.stringify(request.messages).length) / 4);
}

export function anthropicChat(settings: {
  readonly model: string;
  readonly native: NativeContextManagement | undefined;
  readonly withRetries: RetryingCall<Anthropic>;
}): Pick<ModelProvider, 'chat'> & Required<Pick<ModelProvider, 'countTokens'>> {
  const { model, native, withRetries } = settings;
  const params = (request: Omit<ChatRequest, 'maxTokens'>) => ({
    model,
    system: systemBlocks(request.system),
    messages: [...request.messages],
    ...(request.tools.length === 0 ? {} : { tools: [...request.tools] }),
  });
  return {
    async chat(request) {
      const body = { ...params(request), max_tokens: request.maxTokens };
      const outcome = await withRetries(
        async (client, signal) => {
          const options = signal === undefined ? {} : { signal };
          if (native === undefined) return client.messages.create(body, options);
          return (await client.beta.messages.create(
            {
              ...body,
              betas: native.betas,
              context_management: native.context_management,
            } as Anthropic.Beta.MessageCreateParamsNonStreaming,
            options,
          )) as unknown as Anthropic.Message;
        },
        request.signal,
        chatTokens(request),
      );
      const response = outcome.value;
      return {
        content: response.content,
        stopReason: response.stop_reason ?? 'end_turn',
        usage: usageOf(response),
        attempts: outcome.attempts,
      };
    },
    async countTokens(request) {
      const outcome = await withRetries(
        (client, signal) =>
          client.messages.countTokens(params(request), signal === undefined ? {} : { signal }),
        request.signal,
      );
      return outcome.value.input_tokens;
    },
  };
}
