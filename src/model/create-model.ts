import { createCostMeter } from './cost-meter.js';
import { parseModelConfig, type ModelConfigInput, type ProviderOptions } from './provider-options.js';
import { deferredProvider } from './deferred-provider.js';
import { endpointFor, providerKind } from './providers.js';
import type { ModelProvider } from './types.js';

/**
 * The provider named by `model.provider`, from the provider table. Credentials are checked here, at once
 * (ModelError `missing-credentials`), so a daemon fails at start and not in the middle of a job; the
 * provider's SDK loads at its first call, so a process that never calls the model (the agent kit's import,
 * `dreamd --help`) never loads it. `config/load.ts` has already put DREAMD_MODEL_API_KEY / ANTHROPIC_API_KEY /
 * OPENAI_API_KEY in the config.
 *
 * States of the SDK: not loaded → loading (first call) → loaded (every later call); a failed load goes back
 * to not loaded and the next call tries again.
 */
export function createModel(input: ModelConfigInput, options: ProviderOptions = {}): ModelProvider {
  const config = parseModelConfig(input);
  const kind = providerKind(config.provider);
  if (options.client === undefined) endpointFor(config, options.env ?? process.env);
  return deferredProvider(
    { ...kind.shape(config, options.chat ?? {}), ...kind, costOf: createCostMeter(config) },
    async () => (await kind.load())(config, options),
  );
}
