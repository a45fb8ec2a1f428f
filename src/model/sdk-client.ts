import type { ProviderOptions } from './provider-options.js';
import { observingFetch, type RateGate } from './rate-gate.js';
import type { ResolvedModel } from './resolved-model.js';
import { createRetryingCall, type RetryingCall } from './retry.js';
import { isUserAbort, modelErrorFromSdk, type ErrorContext, type SdkErrorClasses } from './sdk-errors.js';

/** What both SDKs' clients offer that the retrying call needs. */
interface SdkClient<C> {
  readonly timeout: number;
  readonly maxRetries: number;
  withOptions(options: { maxRetries: number }): C;
}

/** Where an adapter's client sends and how its SDK fails. */
export interface SdkClientSetup<C> {
  /** The caller's own client, when it brought one: its `maxRetries` is the budget, not the config's. */
  readonly own: C | undefined;
  readonly model: ResolvedModel;
  readonly options: ProviderOptions;
  readonly baseUrl: string;
  /** The key's gate (`rateGateFor`). */
  readonly gate: RateGate;
  /** The SDK's error classes, to tell an abort from a failure and map the failure. */
  readonly errors: SdkErrorClasses;
  /** See ErrorContext.baseUrlNeedsVersion (OpenAI-compatible servers). */
  readonly baseUrlNeedsVersion?: true;
  /** A failure the provider reads its own way before the common mapping; undefined: the common one. */
  readonly providerError?: (error: unknown) => unknown;
}

/**
 * An adapter's SDK client and the one retrying call over it, written once for both providers: the SDK's own
 * retries off (dreamd retries itself, see retry.ts: one budget for faults and bad output, attempts
 * reported), every response shown to the key's gate, failures mapped to ModelError. `create` builds a new
 * client with the SDK options it is given; a caller's own client is used instead, its retries turned off.
 */
export function sdkClient<C extends SdkClient<C>>(
  setup: SdkClientSetup<C>,
  create: (sdkOptions: { maxRetries: 0; fetch: typeof globalThis.fetch }) => C,
): { client: C; withRetries: RetryingCall<C> } {
  const { own, model, options, errors } = setup;
  const client =
    own === undefined
      ? // Every response passes the key's gate: a retry-after pauses the key, rate-limit headers pace it.
        create({ maxRetries: 0, fetch: observingFetch(setup.gate, options.fetch ?? globalThis.fetch) })
      : // The caller's client, its own retries off: its maxRetries is dreamd's budget below.
        own.withOptions({ maxRetries: 0 });
  const label = model.shape.label;
  const maxRetries = own === undefined ? model.config.maxRetries : own.maxRetries;
  const errorContext: ErrorContext = {
    label,
    baseUrl: setup.baseUrl,
    timeoutMs: client.timeout,
    keyHint: model.keyHint,
    ...(setup.baseUrlNeedsVersion === true ? { baseUrlNeedsVersion: true } : {}),
  };
  const withRetries = createRetryingCall(client, {
    maxRetries,
    label,
    options,
    isUserAbort: (error) => isUserAbort(error, errors),
    toModelError: (error) => setup.providerError?.(error) ?? modelErrorFromSdk(error, errors, errorContext),
    gate: setup.gate,
  });
  return { client, withRetries };
}
