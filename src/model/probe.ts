import type { ModelConfig } from '../config/schema.js';
import { ModelError, ModelErrorKind, errorMessage } from '../errors.js';
import { resolveModelEndpoint } from './endpoint.js';
import { createAnthropicModel, createOpenAICompatibleModel } from './sdk-models.js';
import type { ProviderOptions } from './provider-options.js';
import { lacksVersionPath } from './sdk-errors.js';

/**
 * A cheap request to the configured model endpoint: the models list (`GET /v1/models`), which the providers
 * dreamd speaks to serve (Anthropic, OpenAI, Ollama, vLLM, LM Studio, LiteLLM), costs no tokens and checks
 * the URL and the key at once. A server without one (some proxies and gateways answer 404, 405 or 501) is
 * asked one request of one output token instead, only when the caller allows it (`messages`: it is paid).
 * Used by `dreamd doctor` (`--probe-messages`).
 */

/** How long the probe waits for an answer: 5 s, so doctor answers quickly when the endpoint is down. */
export const PROBE_TIMEOUT_MS = 5_000;

export interface ModelProbe {
  readonly ok: boolean;
  /** The base URL the SDK was given, the one every run will use. */
  readonly baseUrl: string | undefined;
  readonly detail: string;
  readonly fix?: string;
}

export interface ProbeOptions extends ProviderOptions {
  /**
   * When the endpoint serves no models list, send one generation request of one output token (a few paid
   * tokens) to check the key and the model name. Default false: the probe spends nothing.
   */
  readonly messages?: boolean;
}

export async function probeModelEndpoint(
  config: ModelConfig,
  options: ProbeOptions = {},
): Promise<ModelProbe> {
  const env = options.env ?? process.env;
  const endpoint = resolveModelEndpoint(config, env);
  const quick: ModelConfig = { ...config, maxRetries: 0, timeoutMs: PROBE_TIMEOUT_MS };
  try {
    let listed: string[];
    try {
      listed =
        config.provider === 'openai-compatible'
          ? await listOpenAIModels(quick, options)
          : await listAnthropicModels(quick, options);
    } catch (error) {
      // Some servers and proxies have no models list: one tiny request checks the URL, the key and the name.
      if (!(error instanceof ModelError) || ![404, 405, 501].includes(error.status ?? 0)) throw error;
      const missingVersion =
        config.provider === 'openai-compatible' &&
        endpoint.baseUrl !== undefined &&
        lacksVersionPath(endpoint.baseUrl);
      if (options.messages !== true && !missingVersion) {
        return {
          ok: true,
          baseUrl: endpoint.baseUrl,
          detail:
            `${endpoint.baseUrl} answers, but serves no models list (HTTP ${error.status ?? '?'} for GET /models): ` +
            `the key and ${config.name} were not checked; \`dreamd doctor --probe-messages\` checks them ` +
            'with one one-token request (a few paid tokens)',
        };
      }
      if (options.messages !== true) throw error;
      if (config.provider === 'openai-compatible') await askOpenAIOnce(quick, options);
      else await askAnthropicOnce(quick, options);
      return {
        ok: true,
        baseUrl: endpoint.baseUrl,
        detail:
          `${endpoint.baseUrl} answers a one-token request to ${config.name} ` +
          `(it serves no models list: HTTP ${error.status ?? '?'} for GET /models)`,
      };
    }
    const known = listed.length === 0 || listed.includes(config.name);
    return {
      ok: true,
      baseUrl: endpoint.baseUrl,
      detail:
        `${endpoint.baseUrl} answers (${listed.length} models listed` +
        (known ? ')' : `; ${config.name} is not among them, check model.name)`),
    };
  } catch (error) {
    return { ok: false, baseUrl: endpoint.baseUrl, ...describeFailure(error, config, endpoint.baseUrl) };
  }
}

async function listAnthropicModels(config: ModelConfig, options: ProviderOptions): Promise<string[]> {
  const model = createAnthropicModel(config, options);
  const { value } = await model.withRetries((client, signal) =>
    client.models.list({ limit: 100 }, signal ? { signal } : undefined),
  );
  return value.data.map((entry) => entry.id);
}

async function listOpenAIModels(config: ModelConfig, options: ProviderOptions): Promise<string[]> {
  const model = createOpenAICompatibleModel(config, options);
  const { value } = await model.withRetries((client, signal) =>
    client.models.list(signal ? { signal } : undefined),
  );
  return value.data.map((entry) => entry.id);
}

/** The smallest generation request: a few input tokens and one output token. */
async function askAnthropicOnce(config: ModelConfig, options: ProviderOptions): Promise<void> {
  const model = createAnthropicModel(config, options);
  await model.withRetries((client, signal) =>
    client.messages.create(
      { model: config.name, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] },
      signal ? { signal } : undefined,
    ),
  );
}

async function askOpenAIOnce(config: ModelConfig, options: ProviderOptions): Promise<void> {
  const model = createOpenAICompatibleModel(config, options);
  await model.withRetries((client, signal) =>
    client.chat.completions.create(
      { model: config.name, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] },
      signal ? { signal } : undefined,
    ),
  );
}

function describeFailure(
  error: unknown,
  config: ModelConfig,
  baseUrl: string | undefined,
): { detail: string; fix: string } {
  const where =
    config.provider === 'openai-compatible'
      ? 'model.baseUrl (DREAMD_MODEL_BASE_URL) or OPENAI_BASE_URL'
      : 'model.baseUrl (DREAMD_MODEL_BASE_URL) or ANTHROPIC_BASE_URL';
  if (!(error instanceof ModelError)) return { detail: errorMessage(error), fix: `check ${where}` };
  switch (error.details.kind) {
    case ModelErrorKind.missingCredentials:
      return { detail: error.message, fix: `set ${where}` };
    case ModelErrorKind.auth:
      return {
        detail: error.message,
        fix:
          config.provider === 'openai-compatible'
            ? 'check OPENAI_API_KEY (or DREAMD_MODEL_API_KEY)'
            : 'check ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN (or DREAMD_MODEL_API_KEY)',
      };
    case ModelErrorKind.connection:
    case ModelErrorKind.timeout:
      return { detail: error.message, fix: `start the model server, or point ${where} at one that runs` };
    default:
      if (
        error.status === 404 &&
        config.provider === 'openai-compatible' &&
        baseUrl !== undefined &&
        lacksVersionPath(baseUrl)
      ) {
        return { detail: error.message, fix: `add /v1 to the base URL (${where})` };
      }
      return { detail: error.message, fix: `check ${where}` };
  }
}
