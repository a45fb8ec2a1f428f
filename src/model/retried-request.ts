import { addUsage, emptyUsage, type TokenUsage } from '../core/usage.js';
import type { RetryingCall } from './retry.js';
import type { ModelResult } from './types.js';

/** What a request sends as text: enough to estimate its input tokens. */
export interface RequestText {
  readonly system: string;
  readonly prompt: string;
  readonly promptPrefix?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** The input tokens a request will take, roughly (4 characters a token), for the key's rate-limit pacing. */
export function requestTokens(request: RequestText): number {
  return Math.ceil((request.system.length + request.prompt.length + (request.promptPrefix?.length ?? 0)) / 4);
}

/**
 * One request of a provider through its retry loop, the tokens of every attempt summed: an attempt that
 * failed (bad output, a refusal) was billed too. `attempt` reports each answer's usage through `count`
 * as soon as the answer is in, before it is read.
 */
export async function retriedRequest<C, R>(
  withRetries: RetryingCall<C>,
  request: RequestText,
  attempt: (sdk: C, signal: AbortSignal | undefined, count: (usage: TokenUsage) => void) => Promise<R>,
): Promise<ModelResult<R>> {
  let usage = emptyUsage();
  const count = (more: TokenUsage): void => {
    usage = addUsage(usage, more);
  };
  const outcome = await withRetries(
    (sdk, signal) => attempt(sdk, signal, count),
    request.signal,
    requestTokens(request),
  );
  return { value: outcome.value, usage, attempts: outcome.attempts };
}
