import type { ModelConfig } from '../config/schema.js';
import { anthropicNative } from './context-management.js';
import { costMeterOf } from './cost-meter.js';
import { deferredProvider } from './deferred-provider.js';
import { resolveModelEndpoint } from './endpoint.js';
import { parseModelConfig, type ModelConfigInput, type ProviderOptions } from './provider-options.js';
import { endpointFor, providerKind } from './providers.js';
import type { ResolvedModel } from './resolved-model.js';
import type { ModelProvider } from './types.js';

/**
 * The provider named by `model.provider`, from the provider table. Credentials are checked here, at once
 * (ModelError `missing-credentials`), so a daemon fails at start and not in the middle of a job; the
 * provider's SDK loads at its first call, so a process that never calls the model (the agent kit's import,
 * `dreamd --help`) never loads it. `config/load.ts` has already put DREAMD_MODEL_API_KEY / ANTHROPIC_API_KEY /
 * OPENAI_API_KEY in the config. The model is resolved once; the adapter built at the first call receives it,
 * with its cost meter.
 *
 * States of the SDK: not loaded → loading (first call) → loaded (every later call); a failed load goes back
 * to not loaded and the next call tries again.
 */
export function createModel(input: ModelConfigInput, options: ProviderOptions = {}): ModelProvider {
  const model = resolveModel(input, options);
  const kind = providerKind(model.config.provider);
  if (options.client === undefined) model.checkedEndpoint();
  return deferredProvider({ ...model.shape, ...kind, costOf: model.costOf }, async () =>
    (await kind.load())(model, options),
  );
}

/**
 * A model's settings resolved once: the config parsed (a bad field is a ConfigError naming it), the endpoint
 * resolved, label, key hint, native context management and the model's cost meter. `provider` overrides the
 * config's (a caller that asks for one adapter by name).
 */
export function resolveModel(
  input: ModelConfigInput,
  options: ProviderOptions = {},
  provider?: ModelConfig['provider'],
): ResolvedModel {
  const config = parseModelConfig(input);
  const name = provider ?? config.provider;
  const kind = providerKind(name);
  const chat = options.chat ?? {};
  const env = options.env ?? process.env;
  const endpoint = resolveModelEndpoint(config, env);
  return {
    config,
    endpoint,
    checkedEndpoint: () => endpointFor(config, env),
    shape: kind.shape(config, chat),
    native: name === 'anthropic' ? anthropicNative(config, chat) : undefined,
    serverTools: kind.serverTools,
    keyHint: kind.keyHint,
    costOf: costMeterOf(config),
  };
}
