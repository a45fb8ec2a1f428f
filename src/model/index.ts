export * from './types.js';
export { createAnthropicModel, createOpenAICompatibleModel } from './sdk-models.js';
export {
  cachedSystem,
  DEFAULT_ANTHROPIC_MODEL,
  ANTHROPIC_BASE_URL,
  type AnthropicModel,
} from './anthropic.js';
export type { OpenAICompatibleModel } from './openai-compatible.js';
export { createModel } from './create-model.js';
export {
  resolveModelEndpoint,
  EndpointSource,
  type ModelEndpoint,
  type ModelEnvironment,
} from './endpoint.js';
export { probeModelEndpoint, PROBE_TIMEOUT_MS, type ModelProbe } from './probe.js';
export {
  parseModelConfig,
  type ModelConfigInput,
  type ModelLogger,
  type ProviderOptions,
} from './provider-options.js';
export {
  retryWithBackoff,
  backoffDelayMs,
  DEFAULT_RETRY_BASE_DELAY_MS,
  DEFAULT_RETRY_MAX_DELAY_MS,
  DEFAULT_MAX_RETRY_AFTER_MS,
  type RetryOptions,
  type RetryOutcome,
} from './retry.js';
export { parseRetryAfterMs } from './sdk-errors.js';
export { validateOutput, parseJsonOutput, OutputLimitError, AnswerTooLargeError } from './output.js';
