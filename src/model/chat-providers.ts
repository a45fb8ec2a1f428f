import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { ModelConfig } from '../config/schema.js';
import { costMeterOf } from './cost-meter.js';
import { deferredProvider } from './deferred-provider.js';
import type { ChatOptions, ProviderOptions } from './provider-options.js';
import { PROVIDERS } from './providers.js';
import type { ModelProvider } from './types.js';

/**
 * Providers over an SDK client of the caller's own (a custom transport, a proxy, a client the application
 * already has): the same providers `createModel` builds from the config, so their chat calls go through
 * dreamd's retry policy (the client's `maxRetries` is the budget) and the endpoint's rate gate. Nothing
 * loads until the first call (not the SDK, not the config schema): the agent kit offers these at no cost.
 */

/** A provider over `client` from the table's shape; `createModel` itself (and its schema) load at the first call. */
function overClient(
  config: Pick<ModelConfig, 'provider' | 'name'> & { readonly baseUrl?: string },
  options: ProviderOptions & { readonly chat: ChatOptions },
): ModelProvider {
  const kind = PROVIDERS[config.provider];
  return deferredProvider(
    {
      ...kind.shape(config, options.chat),
      ...kind,
      costOf: costMeterOf({ name: config.name, price: undefined }),
    },
    async () => (await import('./create-model.js')).createModel(config, options),
  );
}

export interface AnthropicChatProviderOptions {
  readonly client: Anthropic;
  readonly model: string;
  /** See `ChatOptions.contextManagement`. Default `auto`: native for Claude models. */
  readonly contextManagement?: ChatOptions['contextManagement'];
  /** Default 200,000 for Claude models. */
  readonly contextWindow?: number;
}

/** The Anthropic Messages API through `client`, with native context management for Claude models. */
export function createAnthropicChatProvider(options: AnthropicChatProviderOptions): ModelProvider {
  return overClient(
    { provider: 'anthropic', name: options.model },
    {
      client: options.client,
      chat: { contextManagement: options.contextManagement, contextWindow: options.contextWindow },
    },
  );
}

export interface OpenAIChatProviderOptions {
  /** A configured `openai` client (base URL ending in `/v1`, key, timeout, retries). */
  readonly client: OpenAI;
  readonly model: string;
  /** Tokens. Default 8,192 for a non-Claude model name. */
  readonly contextWindow?: number;
}

/** Any OpenAI-compatible Chat Completions endpoint through `client`. */
export function createOpenAIChatProvider(options: OpenAIChatProviderOptions): ModelProvider {
  return overClient(
    { provider: 'openai-compatible', name: options.model, baseUrl: options.client.baseURL },
    { client: options.client, chat: { contextWindow: options.contextWindow } },
  );
}
