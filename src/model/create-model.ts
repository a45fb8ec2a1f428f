import { createAnthropicModel, type AnthropicModel } from './anthropic.js';
import { createOpenAICompatibleModel, type OpenAICompatibleModel } from './openai-compatible.js';
import { parseModelConfig, type ModelConfigInput, type ProviderOptions } from './provider-options.js';

/**
 * The provider named by `model.provider`. The key comes from the config; `config/load.ts` has already put
 * DREAMD_MODEL_API_KEY / ANTHROPIC_API_KEY / OPENAI_API_KEY there. Missing credentials throw ModelError
 * `missing-credentials` here, at start.
 */
export function createModel(
  input: ModelConfigInput,
  options: ProviderOptions = {},
): AnthropicModel | OpenAICompatibleModel {
  const config = parseModelConfig(input);
  return config.provider === 'openai-compatible'
    ? createOpenAICompatibleModel(config, options)
    : createAnthropicModel(config, options);
}
