import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { ModelConfig } from '../config/schema.js';

/**
 * The part of a logger the model layer uses: one line per retry. pino's logger fits as it is.
 */
export interface ModelLogger {
  warn(data: Record<string, unknown>, message: string): void;
}

/** How a provider handles a conversation (the agent's chat calls). */
export interface ChatOptions {
  /** Context window of the model, in tokens. Default 200,000 for Claude models, else 8,192. */
  readonly contextWindow?: number | undefined;
  /**
   * `native`: Anthropic's context management (tool-result clearing, and compaction where the model has it);
   * `client`: none (the agent loop clears and trims); `auto` (default): native for Claude models.
   */
  readonly contextManagement?: 'auto' | 'native' | 'client' | undefined;
}

/** IO and tuning handed to a provider factory. Everything is optional; the defaults are production's. */
export interface ProviderOptions {
  /** fetch used by the SDK. Default the global fetch. */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * Environment the SDKs' own variables are read from (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY,
   * ANTHROPIC_AUTH_TOKEN, OPENAI_BASE_URL, OPENAI_API_KEY); `model.baseUrl` and `model.apiKey` win over them.
   * Default process.env.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where retries are reported. Default: nowhere. */
  readonly logger?: ModelLogger;
  /**
   * First backoff delay in ms; it doubles with each retry, with jitter. Default 500 ms, the SDKs' own
   * figure. Tests use a few ms.
   */
  readonly retryBaseDelayMs?: number;
  /** Longest backoff delay in ms. Default 8,000 ms. */
  readonly retryMaxDelayMs?: number;
  /**
   * Longest `retry-after` the layer waits for in ms. Default 60,000 ms. A server asking for longer gets no
   * retry here: the ModelError carries `retryAfterMs` so the job can be retried later instead.
   */
  readonly maxRetryAfterMs?: number;
  /**
   * An SDK client of the provider's own (`Anthropic` or `OpenAI`) to call through instead of one built from
   * the config: its key, base URL, timeout and transport are used, and its `maxRetries` becomes dreamd's retry
   * budget (dreamd's loop retries; the client's own retries are turned off on a copy).
   */
  readonly client?: Anthropic | OpenAI | undefined;
  /** How the provider handles a conversation. */
  readonly chat?: ChatOptions | undefined;
}

/** A model config as written (defaults not applied yet), or as parsed. */
export type ModelConfigInput = z.input<typeof ModelConfig>;

/** Apply the config's defaults and validate; a bad field is a ConfigError naming it. */
export function parseModelConfig(input: ModelConfigInput): ModelConfig {
  const result = ModelConfig.safeParse(input);
  if (!result.success) {
    const first = result.error.issues[0];
    const field = first ? ['model', ...first.path.map(String)].join('.') : 'model';
    throw new ConfigError(`${field}: ${first?.message ?? 'invalid model settings'}`, field, {
      cause: result.error,
    });
  }
  return result.data;
}
