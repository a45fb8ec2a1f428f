import { setTimeout as sleep } from 'node:timers/promises';
import { ModelError } from '../errors.js';
import type { ModelLogger } from './provider-options.js';
import type { RateGate } from './rate-gate.js';

/**
 * Retry with exponential backoff and jitter, in the manner of vercel/ai's retryWithExponentialBackoff.
 *
 * dreamd runs its own loop and turns the SDKs' retries off (maxRetries 0) because:
 * - output that breaks the schema must share the same retry budget, and the SDKs never retry it;
 * - the number of attempts is reported in every ModelResult;
 * - both providers behave the same, and the base delay is configurable (tests use a few ms).
 */

export interface RetryOptions {
  /** Retries after the first attempt (config `model.maxRetries`, default 4). */
  readonly maxRetries: number;
  /** First backoff delay in ms; doubles with each retry. Default 500 ms. */
  readonly baseDelayMs?: number | undefined;
  /** Longest backoff delay in ms. Default 8,000 ms. */
  readonly maxDelayMs?: number | undefined;
  /** Longest `retry-after` honoured, in ms. Default 60,000 ms; a longer one ends the retries at once. */
  readonly maxRetryAfterMs?: number | undefined;
  /** Aborts the wait between attempts. */
  readonly signal?: AbortSignal | undefined;
  /** Random source for the jitter, [0, 1). Default Math.random. */
  readonly random?: (() => number) | undefined;
  readonly logger?: ModelLogger | undefined;
  /** Label used in log lines and the final message, e.g. `anthropic:claude-haiku-5-5`. */
  readonly label: string;
}

export const DEFAULT_RETRY_BASE_DELAY_MS = 500;
export const DEFAULT_RETRY_MAX_DELAY_MS = 8_000;
export const DEFAULT_MAX_RETRY_AFTER_MS = 60_000;

export interface RetryOutcome<T> {
  readonly value: T;
  /** Attempts made, 1 when the first one succeeded. */
  readonly attempts: number;
}

/**
 * Runs `attempt` until it succeeds, throws a non-retryable error, or the retries run out. `attempt` must
 * throw ModelError for model failures; any other error (an abort, a bug) passes through at once.
 */
export async function retryWithBackoff<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  options: RetryOptions,
): Promise<RetryOutcome<T>> {
  const maxRetryAfterMs = options.maxRetryAfterMs ?? DEFAULT_MAX_RETRY_AFTER_MS;
  for (let attemptNumber = 1; ; attemptNumber++) {
    options.signal?.throwIfAborted();
    try {
      return { value: await attempt(attemptNumber), attempts: attemptNumber };
    } catch (error) {
      if (!(error instanceof ModelError) || !error.retryable) throw error;
      const retryAfterMs = error.details.retryAfterMs;
      if (retryAfterMs !== undefined && retryAfterMs > maxRetryAfterMs) {
        throw giveUp(error, attemptNumber, `the server asked to wait ${Math.ceil(retryAfterMs / 1000)} s`);
      }
      if (attemptNumber > options.maxRetries) {
        throw giveUp(
          error,
          attemptNumber,
          `gave up after ${attemptNumber} ${attemptNumber === 1 ? 'attempt' : 'attempts'}`,
        );
      }
      const delayMs = retryAfterMs ?? backoffDelayMs(attemptNumber, options);
      options.logger?.warn(
        {
          model: options.label,
          attempt: attemptNumber,
          kind: error.details.kind,
          status: error.status,
          delayMs,
        },
        `model call failed, retrying in ${Math.round(delayMs)} ms: ${error.message}`,
      );
      await wait(delayMs, options.signal);
    }
  }
}

/** Backoff before retry number `retryNumber` (1-based): base × 2^(n−1), capped, times a jitter in [0.5, 1). */
export function backoffDelayMs(
  retryNumber: number,
  options: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs' | 'random'>,
): number {
  const base = options.baseDelayMs ?? DEFAULT_RETRY_BASE_DELAY_MS;
  const cap = options.maxDelayMs ?? DEFAULT_RETRY_MAX_DELAY_MS;
  const exponential = Math.min(cap, base * 2 ** (retryNumber - 1));
  // Jitter spreads the retries of many workers hit by the same 529 so they do not return together.
  const jitter = 0.5 + 0.5 * (options.random ?? Math.random)();
  return exponential * jitter;
}

/** Sleeps; an abort ends the wait with the signal's reason, as the SDKs' own calls do. */
async function wait(delayMs: number, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return sleep(delayMs);
  try {
    await sleep(delayMs, undefined, { signal });
  } catch (error) {
    throw signal.aborted ? signal.reason : error;
  }
}

function giveUp(last: ModelError, attempts: number, why: string): ModelError {
  return new ModelError(`${last.message} (${why})`, { ...last.details }, { cause: last });
}

/** A provider's SDK call with dreamd's retry loop around it; `estimatedTokens`: the request's input, for the gate. */
export type RetryingCall<C> = <R>(
  call: (client: C, signal?: AbortSignal) => Promise<R>,
  signal?: AbortSignal,
  estimatedTokens?: number,
) => Promise<RetryOutcome<R>>;

/**
 * Wraps calls to a provider's SDK client in `retryWithBackoff`: an abort the caller asked for ends the call
 * with the signal's reason; any other failure becomes what `toModelError` makes of it (a ModelError saying
 * whether a retry may help), and the loop retries the retryable ones with the config's budget. Each attempt
 * passes the key's gate (`rate-gate.ts`): its concurrency cap, and any pause the server asked for.
 */
export function createRetryingCall<C>(
  client: C,
  settings: {
    readonly maxRetries: number;
    readonly label: string;
    readonly options: {
      readonly retryBaseDelayMs?: number | undefined;
      readonly retryMaxDelayMs?: number | undefined;
      readonly maxRetryAfterMs?: number | undefined;
      readonly logger?: RetryOptions['logger'];
    };
    readonly isUserAbort: (error: unknown) => boolean;
    readonly toModelError: (error: unknown) => unknown;
    /** The key's gate; default: none (every attempt goes at once). */
    readonly gate?: RateGate | undefined;
  },
): RetryingCall<C> {
  const { options, gate } = settings;
  return (call, signal, estimatedTokens) =>
    retryWithBackoff(
      async () => {
        try {
          if (gate === undefined) return await call(client, signal);
          return await gate.run(() => call(client, signal), {
            ...(signal ? { signal } : {}),
            ...(estimatedTokens !== undefined ? { estimatedTokens } : {}),
          });
        } catch (error) {
          if (signal?.aborted === true || settings.isUserAbort(error)) throw signal?.reason ?? error;
          throw settings.toModelError(error);
        }
      },
      {
        maxRetries: settings.maxRetries,
        baseDelayMs: options.retryBaseDelayMs,
        maxDelayMs: options.retryMaxDelayMs,
        maxRetryAfterMs: options.maxRetryAfterMs,
        signal,
        logger: options.logger,
        label: settings.label,
      },
    );
}
