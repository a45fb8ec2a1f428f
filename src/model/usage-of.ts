import type { Message } from '@anthropic-ai/sdk/resources/messages';
import type { TokenUsage } from '../core/usage.js';

/** The usage of an Anthropic message as dreamd counts it (cache reads and writes apart from input). */
export function usageOf(message: Pick<Message, 'usage'>): TokenUsage {
  return {
    inputTokens: message.usage.input_tokens,
    outputTokens: message.usage.output_tokens,
    cacheReadTokens: message.usage.cache_read_input_tokens ?? 0,
    cacheWriteTokens: message.usage.cache_creation_input_tokens ?? 0,
  };
}
