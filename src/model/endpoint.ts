import type { ModelConfig } from '../config/schema.js';

/**
 * Where the model is called and with which credentials, resolved the way the SDKs do it themselves:
 * `model.baseUrl` (or DREAMD_MODEL_BASE_URL) first, then the SDK's own variable (`ANTHROPIC_BASE_URL`,
 * `OPENAI_BASE_URL`, as proxies, gateways and Claude tools set it), then the provider's default. Keys likewise:
 * `model.apiKey` (DREAMD_MODEL_API_KEY), then `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`; for Anthropic also
 * `ANTHROPIC_AUTH_TOKEN` (a bearer token, as gateways use). The SDKs read their remaining variables
 * (`OPENAI_ORG_ID`, `OPENAI_PROJECT_ID`, `ANTHROPIC_LOG`, `OPENAI_LOG`) themselves.
 */

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

/** The environment the endpoint is read from; a plain record so callers (and the CLI) pass their own. */
export type ModelEnvironment = Readonly<Record<string, string | undefined>>;

/** Where the base URL came from, as shown by `dreamd doctor`. */
export const EndpointSource = {
  config: 'model.baseUrl',
  anthropicVariable: 'ANTHROPIC_BASE_URL',
  openaiVariable: 'OPENAI_BASE_URL',
  providerDefault: 'default',
} as const;
export type EndpointSource = (typeof EndpointSource)[keyof typeof EndpointSource];

export interface ModelEndpoint {
  /** Base URL handed to the SDK; undefined for an openai-compatible provider with none configured. */
  readonly baseUrl: string | undefined;
  readonly source: EndpointSource | undefined;
  /** The key sent as `x-api-key` (Anthropic) or `Authorization: Bearer` (OpenAI-compatible). */
  readonly apiKey: string | undefined;
  /** Anthropic only: `ANTHROPIC_AUTH_TOKEN`, sent as `Authorization: Bearer`. */
  readonly authToken: string | undefined;
}

function present(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** Resolves base URL and credentials for a parsed model config. Pure: reads only `env`. */
export function resolveModelEndpoint(
  config: Pick<ModelConfig, 'provider' | 'baseUrl' | 'apiKey'>,
  env: ModelEnvironment,
): ModelEndpoint {
  if (config.provider === 'openai-compatible') {
    const variable = present(env.OPENAI_BASE_URL);
    const baseUrl = config.baseUrl ?? variable;
    return {
      baseUrl,
      source:
        config.baseUrl !== undefined
          ? EndpointSource.config
          : variable !== undefined
            ? EndpointSource.openaiVariable
            : undefined,
      apiKey: config.apiKey ?? present(env.OPENAI_API_KEY),
      authToken: undefined,
    };
  }
  const variable = present(env.ANTHROPIC_BASE_URL);
  return {
    baseUrl: config.baseUrl ?? variable ?? ANTHROPIC_BASE_URL,
    source:
      config.baseUrl !== undefined
        ? EndpointSource.config
        : variable !== undefined
          ? EndpointSource.anthropicVariable
          : EndpointSource.providerDefault,
    apiKey: config.apiKey ?? present(env.ANTHROPIC_API_KEY),
    authToken: present(env.ANTHROPIC_AUTH_TOKEN),
  };
}

/** True when the endpoint is not the provider's own (a proxy, gateway or local server). */
export function isCustomEndpoint(endpoint: ModelEndpoint): boolean {
  return endpoint.source !== EndpointSource.providerDefault;
}
