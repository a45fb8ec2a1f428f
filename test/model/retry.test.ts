import { describe, expect, it } from 'vitest';
import { ModelError, ModelErrorKind } from '../../src/errors.js';
import { backoffDelayMs, retryWithBackoff } from '../../src/model/retry.js';
import { parseRetryAfterMs } from '../../src/model/sdk-errors.js';

function failure(kind: ModelErrorKind, retryable: boolean, retryAfterMs?: number): ModelError {
  return new ModelError(`failed: ${kind}`, { kind, retryable, retryAfterMs });
}

describe('backoffDelayMs', () => {
  it('doubles from the base delay, capped, with jitter between half and all of it', () => {
    const options = { baseDelayMs: 100, maxDelayMs: 1_000 };
    expect(
      [1, 2, 3, 4, 5].map((retry) => backoffDelayMs(retry, { ...options, random: () => 0.999999 })),
    ).toEqual([100, 200, 400, 800, 1_000].map((delay) => expect.closeTo(delay, 0) as unknown));
    expect(backoffDelayMs(3, { ...options, random: () => 0 })).toBe(200);
  });
});

describe('parseRetryAfterMs', () => {
  it('reads retry-after-ms first, then retry-after in seconds or as a date', () => {
    const now = Date.parse('2026-11-26T10:00:00Z');
    expect(parseRetryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
    expect(parseRetryAfterMs(new Headers({ 'retry-after': '1.5' }), now)).toBe(1_500);
    expect(parseRetryAfterMs(new Headers({ 'retry-after': 'Thu, 26 Nov 2026 10:00:30 GMT' }), now)).toBe(
      30_000,
    );
    expect(parseRetryAfterMs(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(parseRetryAfterMs(new Headers({ 'retry-after': '-3' }), now)).toBeUndefined();
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
  });
});

describe('retryWithBackoff', () => {
  const options = { maxRetries: 3, baseDelayMs: 1, label: 'test:model' };

  it('reports the attempts it took', async () => {
    let calls = 0;
    const outcome = await retryWithBackoff(async () => {
      calls += 1;
      if (calls < 3) throw failure(ModelErrorKind.server, true);
      return 'ok';
    }, options);
    expect(outcome).toEqual({ value: 'ok', attempts: 3 });
  });

  it.each([
    ['a non-retryable ModelError', failure(ModelErrorKind.badRequest, false)],
    ['an error that is not a model failure', new TypeError('not a model failure')],
  ])('does not retry %s and passes it through', async (_name, error) => {
    let calls = 0;
    await expect(
      retryWithBackoff(async () => {
        calls += 1;
        throw error;
      }, options),
    ).rejects.toBe(error);
    expect(calls).toBe(1);
  });

  it('ends with the last error, its data kept and the attempts in the message', async () => {
    const last = failure(ModelErrorKind.overloaded, true);
    const error: unknown = await retryWithBackoff(
      async () => {
        throw last;
      },
      { ...options, maxRetries: 2 },
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ModelError);
    expect((error as ModelError).details).toEqual(last.details);
    expect((error as ModelError).message).toBe('failed: overloaded (gave up after 3 attempts)');
    expect((error as ModelError).cause).toBe(last);
  });

  it('logs each retry with its delay', async () => {
    const lines: Array<Record<string, unknown>> = [];
    let calls = 0;
    await retryWithBackoff(
      async () => {
        calls += 1;
        if (calls === 1) throw failure(ModelErrorKind.rateLimited, true, 5);
        return 'ok';
      },
      { ...options, logger: { warn: (data) => lines.push(data) } },
    );
    expect(lines).toEqual([
      { model: 'test:model', attempt: 1, kind: 'rate-limited', status: undefined, delayMs: 5 },
    ]);
  });

  it('stops waiting when the signal aborts', async () => {
    const controller = new AbortController();
    const pending = retryWithBackoff(
      async () => {
        throw failure(ModelErrorKind.server, true);
      },
      { ...options, baseDelayMs: 60_000, signal: controller.signal },
    );
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });
});
