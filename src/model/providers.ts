import type { ModelConfig } from '../config/schema.js';
import { ModelError, ModelErrorKind } from '../errors.js';
import { anthropicNative, defaultContextWindow } from './context-management.js';
import { resolveModelEndpoint, type ModelEndpoint, type ModelEnvironment } from './endpoint.js';
import type { ChatOptions, ProviderOptions } from './provider-options.js';
import type { ProviderShape, ResolvedModel } from './resolved-model.js';
import type { ModelProvider } from './types.js';

/**
 * The provider table: every model provider dreamd speaks to, and what each one is, known before its SDK loads.
 * The compiler checks the table against `model.provider` in the config schema, so a third provider is one more
 * entry here (and its adapter file beside `anthropic.ts`); nothing outside `src/model/` and `src/config/` asks
 * which provider it talks to. `resolveModel` (create-model.ts) resolves a model's settings once from the table; an adapter receives
 * the result and imports nothing from here, so the table's lazy import of it is no import circle.
 */

export type { ProviderShape, ResolvedModel } from './resolved-model.js';

/** Builds a provider's adapter, once its SDK is loaded, from the model resolved by the table. */
export type AdapterFactory = (model: ResolvedModel, options: ProviderOptions) => ModelProvider;

export interface ProviderKind {
  /** The variable the provider's SDK reads its base URL from, as `dreamd doctor` names it. */
  readonly baseUrlVariable: string;
  /** Where a key is set, for error messages. */
  readonly keyHint: string;
  /** The provider has a batch API (half-price calls within 24 hours). */
  readonly batches: boolean;
  /** The provider has a token-counting endpoint. */
  readonly countsTokens: boolean;
  /** The provider runs Anthropic's server-defined tools (`memory_20250818`). */
  readonly serverTools: boolean;
  /**
   * The credentials rule: why calls cannot go with this endpoint (the message, and the fix `dreamd doctor`
   * prints), or undefined when they can.
   */
  missing(endpoint: ModelEndpoint): { readonly message: string; readonly fix: string } | undefined;
  /** The credential in use, in words (`key set`, `no API key`), for `dreamd doctor`. */
  credential(endpoint: ModelEndpoint): string;
  shape(config: Pick<ModelConfig, 'name'>, chat: ChatOptions): ProviderShape;
  /** Loads the provider's SDK (a dynamic import: nothing loads it before the first call). */
  load(): Promise<AdapterFactory>;
}

export const PROVIDERS = {
  anthropic: {
    baseUrlVariable: 'ANTHROPIC_BASE_URL',
    keyHint: 'ANTHROPIC_API_KEY, DREAMD_MODEL_API_KEY or model.apiKey',
    batches: true,
    countsTokens: true,
    serverTools: true,
    missing: (endpoint) =>
      endpoint.apiKey === undefined && endpoint.authToken === undefined && endpoint.source === 'default'
        ? {
            message:
              'No API key for the Anthropic model: set ANTHROPIC_API_KEY (or DREAMD_MODEL_API_KEY, or model.apiKey ' +
              'in dreamd.config.json, or ANTHROPIC_AUTH_TOKEN), or point ANTHROPIC_BASE_URL or model.baseUrl ' +
              '(DREAMD_MODEL_BASE_URL) at an endpoint that needs no key.',
            fix:
              'export ANTHROPIC_API_KEY=… (or DREAMD_MODEL_API_KEY), or use a local model: model.provider ' +
              '"openai-compatible" with model.baseUrl',
          }
        : undefined,
    credential: (endpoint) =>
      endpoint.apiKey !== undefined
        ? 'key set'
        : endpoint.authToken !== undefined
          ? 'ANTHROPIC_AUTH_TOKEN set'
          : 'no API key',
    shape(config, chat) {
      const native = anthropicNative(config, chat);
      return {
        label: `anthropic:${config.name}`,
        contextWindow: chat.contextWindow ?? defaultContextWindow(config.name),
        compactsServerSide: native?.compaction === true,
        clearsToolResults: native !== undefined,
      };
    },
    load: async () => (await import('./anthropic.js')).anthropicAdapter,
  },
  'openai-compatible': {
    baseUrlVariable: 'OPENAI_BASE_URL',
    keyHint: 'OPENAI_API_KEY, DREAMD_MODEL_API_KEY or model.apiKey',
    batches: false,
    countsTokens: false,
    serverTools: false,
    missing: (endpoint) =>
      endpoint.baseUrl === undefined
        ? {
            message:
              'No endpoint for the openai-compatible model: set model.baseUrl (DREAMD_MODEL_BASE_URL) or ' +
              'OPENAI_BASE_URL, e.g. http://127.0.0.1:11434/v1 for Ollama, with a key in OPENAI_API_KEY or ' +
              'DREAMD_MODEL_API_KEY if it needs one.',
            fix: 'set model.baseUrl (DREAMD_MODEL_BASE_URL) or OPENAI_BASE_URL, e.g. http://127.0.0.1:11434/v1',
          }
        : undefined,
    credential: (endpoint) => (endpoint.apiKey !== undefined ? 'key set' : 'no key'),
    shape: (config, chat) => ({
      label: `openai-compatible:${config.name}`,
      contextWindow: chat.contextWindow ?? defaultContextWindow(config.name),
      compactsServerSide: false,
      clearsToolResults: false,
    }),
    load: async () => (await import('./openai-compatible.js')).openAICompatibleAdapter,
  },
} as const satisfies Record<ModelConfig['provider'], ProviderKind>;

/** The table's entry of a provider. */
export function providerKind(provider: ModelConfig['provider']): ProviderKind {
  return PROVIDERS[provider];
}

/**
 * The one credentials rule: the endpoint and key calls go to (config first, then the SDK's own variables), or
 * ModelError `missing-credentials` saying what to set. A caller's own SDK client brings its credentials.
 */
export function endpointFor(config: ModelConfig, env: ModelEnvironment): ModelEndpoint {
  const endpoint = resolveModelEndpoint(config, env);
  const missing = providerKind(config.provider).missing(endpoint);
  if (missing !== undefined) {
    throw new ModelError(missing.message, { retryable: false, kind: ModelErrorKind.missingCredentials });
  }
  return endpoint;
}
