import { anthropicAdapter, type AnthropicModel } from './anthropic.js';
import { openAICompatibleAdapter, type OpenAICompatibleModel } from './openai-compatible.js';
import type { ModelConfigInput, ProviderOptions } from './provider-options.js';
import { resolveModel } from './create-model.js';

/**
 * The two adapters by name, for callers that need the SDK client itself (`withRetries` over any SDK call: the
 * agent loop, `dreamd doctor`'s probe). They load the SDK at import; `createModel` loads it at the first call.
 */

/**
 * The Anthropic Messages API provider. Throws ModelError `missing-credentials` at once when there is neither a
 * key nor a `baseUrl`, so a daemon fails at start and not in the middle of a job.
 */
export function createAnthropicModel(input: ModelConfigInput, options: ProviderOptions = {}): AnthropicModel {
  return anthropicAdapter(resolveModel(input, options, 'anthropic'), options);
}

/**
 * A provider for any OpenAI-compatible Chat Completions endpoint (Ollama, vLLM, LM Studio, OpenAI);
 * `model.baseUrl` is required and includes the version path, e.g. `http://127.0.0.1:11434/v1` for Ollama.
 */
export function createOpenAICompatibleModel(
  input: ModelConfigInput,
  options: ProviderOptions = {},
): OpenAICompatibleModel {
  return openAICompatibleAdapter(resolveModel(input, options, 'openai-compatible'), options);
}
