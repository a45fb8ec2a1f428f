import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import PQueue from 'p-queue';
import { parseRetryAfterMs } from './sdk-errors.js';

/**
 * One gate per API key (and endpoint) in the process: every call of every model built on that key passes it,
 * whichever run or space it serves. It holds
 * - the concurrency cap (`model.concurrency`): at most that many requests of the key in flight at once;
 * - a pause the server asked for: a `retry-after` on a 429, 529 or 503 stops every call of the key until it
 *   passes, not only the one that met it (the others would meet the same limit);
 * - what the last answer said of the rate limits (Anthropic's `anthropic-ratelimit-*`, OpenAI's
 *   `x-ratelimit-*`): when the tokens left before the window resets do not cover the next request's estimate,
 *   or no request is left, the call waits for the reset instead of spending a request on a 429.
 *
 * The SDKs' timeouts start inside the gate: a call waiting for its turn never times out for the wait.
 */
export interface RateGate {
  /** Runs `call` when a slot of the key is free and no pause holds; `estimatedTokens` is the request's input. */
  run<T>(call: () => Promise<T>, options?: { signal?: AbortSignal; estimatedTokens?: number }): Promise<T>;
  /** Reads a response's status and headers (every response of the key passes here, 429s included). */
  observe(status: number, headers: Headers, now?: number): void;
  /** Epoch ms before which no call of the key starts (0: none). */
  readonly pausedUntil: number;
  /** Most calls of the key in flight at once. */
  readonly concurrency: number;
}

/** Longest pause a gate takes from a header, so a wrong clock or a bad header cannot stop a key for hours. */
export const MAX_GATE_PAUSE_MS = 60_000;

interface Window {
  /** What is left in the window (tokens or requests). */
  remaining: number;
  /** Epoch ms at which the window is full again. */
  resetAt: number;
}

const gates = new Map<string, RateGate>();

/**
 * The gate of a key: the same object for every model of the process on the same endpoint and key. A later
 * model with another `model.concurrency` (a reloaded config) sets the cap for all.
 */
export function rateGateFor(endpoint: string, apiKey: string | undefined, concurrency: number): RateGate {
  const key = `${endpoint}\u0000${createHash('sha256')
    .update(apiKey ?? '')
    .digest('hex')}`;
  const known = gates.get(key) as (RateGate & { setConcurrency(value: number): void }) | undefined;
  if (known !== undefined) {
    known.setConcurrency(concurrency);
    return known;
  }
  const gate = createRateGate(concurrency);
  gates.set(key, gate);
  return gate;
}

/** A gate of its own (tests, and the building block of `rateGateFor`). */
export function createRateGate(concurrency: number): RateGate & { setConcurrency(value: number): void } {
  const queue = new PQueue({ concurrency });
  let pausedUntil = 0;
  let tokens: Window | undefined;
  let requests: Window | undefined;

  /** Ms to wait before a request of `estimate` tokens may go; reserves the estimate when it may go now. */
  function waitFor(estimate: number, now: number): number {
    if (pausedUntil > now) return pausedUntil - now;
    if (requests !== undefined) {
      if (requests.resetAt <= now) requests = undefined;
      else if (requests.remaining <= 0) return requests.resetAt - now;
    }
    if (tokens !== undefined) {
      if (tokens.resetAt <= now) tokens = undefined;
      else if (tokens.remaining < estimate) return tokens.resetAt - now;
    }
    if (tokens !== undefined) tokens.remaining -= estimate;
    if (requests !== undefined) requests.remaining -= 1;
    return 0;
  }

  async function run<T>(
    call: () => Promise<T>,
    options: { signal?: AbortSignal; estimatedTokens?: number } = {},
  ): Promise<T> {
    const { signal } = options;
    try {
      return await queue.add(
        async () => {
          for (;;) {
            const delay = waitFor(options.estimatedTokens ?? 0, Date.now());
            if (delay <= 0) break;
            await sleep(Math.min(delay, MAX_GATE_PAUSE_MS), undefined, signal ? { signal } : undefined);
          }
          return call();
        },
        signal ? { signal } : {},
      );
    } catch (error) {
      // p-queue and timers reject with their own AbortError; the caller's reason is what the SDKs give.
      if (signal?.aborted === true) throw signal.reason;
      throw error;
    }
  }

  function observe(status: number, headers: Headers, now = Date.now()): void {
    if (status === 429 || status === 529 || status === 503) {
      const retryAfterMs = parseRetryAfterMs(headers, now);
      if (retryAfterMs !== undefined) {
        pausedUntil = Math.max(pausedUntil, now + Math.min(retryAfterMs, MAX_GATE_PAUSE_MS));
      }
    }
    const limits = rateLimitHeaders(headers, now);
    if (limits.tokens !== undefined) tokens = limits.tokens;
    if (limits.requests !== undefined) requests = limits.requests;
  }

  return {
    run,
    observe,
    get pausedUntil() {
      return pausedUntil;
    },
    get concurrency() {
      return queue.concurrency;
    },
    setConcurrency(value: number) {
      queue.concurrency = value;
    },
  };
}

/**
 * The token and request windows a response reports. Anthropic: `anthropic-ratelimit-{input-tokens,tokens,
 * requests}-{remaining,reset}`, the reset an RFC 3339 time; of the input-token and token windows, the one
 * with less left counts. OpenAI and compatible servers: `x-ratelimit-{remaining,reset}-{tokens,requests}`,
 * the reset a duration such as `6m0s`, `1s` or `120ms`. A header missing or unreadable is no window.
 */
export function rateLimitHeaders(
  headers: Headers,
  now: number = Date.now(),
): { tokens?: Window; requests?: Window } {
  const anthropicTokens = [
    windowOf(
      headers,
      'anthropic-ratelimit-input-tokens-remaining',
      'anthropic-ratelimit-input-tokens-reset',
      now,
    ),
    windowOf(headers, 'anthropic-ratelimit-tokens-remaining', 'anthropic-ratelimit-tokens-reset', now),
  ].filter((window): window is Window => window !== undefined);
  const tokens =
    anthropicTokens.sort((a, b) => a.remaining - b.remaining)[0] ??
    windowOf(headers, 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens', now);
  const requests =
    windowOf(headers, 'anthropic-ratelimit-requests-remaining', 'anthropic-ratelimit-requests-reset', now) ??
    windowOf(headers, 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests', now);
  return {
    ...(tokens !== undefined ? { tokens } : {}),
    ...(requests !== undefined ? { requests } : {}),
  };
}

function windowOf(
  headers: Headers,
  remainingName: string,
  resetName: string,
  now: number,
): Window | undefined {
  const remainingText = headers.get(remainingName);
  const resetText = headers.get(resetName);
  if (remainingText === null || resetText === null) return undefined;
  const remaining = Number(remainingText);
  const resetAt = resetTime(resetText, now);
  if (!Number.isFinite(remaining) || remaining < 0 || resetAt === undefined) return undefined;
  return { remaining, resetAt: Math.min(resetAt, now + MAX_GATE_PAUSE_MS) };
}

/** An RFC 3339 time, or a Go-style duration (`1h2m3s`, `6m0s`, `1.5s`, `120ms`) from now. */
export function resetTime(text: string, now: number): number | undefined {
  const trimmed = text.trim();
  if (/^\d{4}-\d{2}-\d{2}T/.test(trimmed)) {
    const time = Date.parse(trimmed);
    return Number.isFinite(time) ? time : undefined;
  }
  if (!/^(?:\d+(?:\.\d+)?(?:ms|h|m|s))+$/.test(trimmed)) return undefined;
  const unitMs: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
    total += Number(match[1]) * (unitMs[match[2] as string] as number);
  }
  return now + total;
}

/** A fetch that shows every response's status and headers to the gate before the SDK reads it. */
export function observingFetch(gate: RateGate, inner: typeof globalThis.fetch): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    gate.observe(response.status, response.headers);
    return response;
  };
}
