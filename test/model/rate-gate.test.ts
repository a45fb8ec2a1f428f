import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRateGate, rateGateFor, rateLimitHeaders, resetTime } from '../../src/model/rate-gate.js';
import { faults } from '../../harness/fake-model-server.js';
import { eventually, modelWork } from '../support/eventually.js';
import { onFakeServer, providers } from './helpers.js';

const Answer = z.object({ facts: z.array(z.object({ title: z.string() })) });
const answer = { facts: [{ title: 'Prefers pnpm' }] };
const request = {
  system: 'Extract facts.',
  prompt: 'The user prefers pnpm.',
  schema: Answer,
  schemaName: 'facts',
};

describe('rate-limit headers', () => {
  const now = Date.parse('2026-12-02T00:00:00Z');

  it.each([
    {
      provider: 'Anthropic',
      windows: 'the lesser of input tokens and tokens, and requests',
      headers: {
        'anthropic-ratelimit-input-tokens-remaining': '3000',
        'anthropic-ratelimit-input-tokens-reset': '2026-12-02T00:00:20Z',
        'anthropic-ratelimit-tokens-remaining': '9000',
        'anthropic-ratelimit-tokens-reset': '2026-12-02T00:00:10Z',
        'anthropic-ratelimit-requests-remaining': '49',
        'anthropic-ratelimit-requests-reset': '2026-12-02T00:00:05Z',
      },
      windowsRead: {
        tokens: { remaining: 3000, resetAt: now + 20_000 },
        requests: { remaining: 49, resetAt: now + 5_000 },
      },
    },
    {
      provider: 'OpenAI',
      windows: 'Go-style durations, and what it cannot read ignored',
      headers: {
        'x-ratelimit-remaining-tokens': '120',
        'x-ratelimit-reset-tokens': '12.5s',
        'x-ratelimit-remaining-requests': 'lots',
        'x-ratelimit-reset-requests': '120ms',
      },
      windowsRead: { tokens: { remaining: 120, resetAt: now + 12_500 } },
    },
    { provider: 'no', windows: 'none', headers: {}, windowsRead: {} },
  ])('reads $provider windows: $windows', ({ headers, windowsRead }) => {
    expect(rateLimitHeaders(new Headers(headers), now)).toEqual(windowsRead);
  });

  it('reads a reset time as a Go-style duration, and none from what it cannot read', () => {
    expect(resetTime('120ms', now)).toBe(now + 120);
    expect(resetTime('1h2m3s', now)).toBe(now + 3_723_000);
    expect(resetTime('soon', now)).toBeUndefined();
  });
});

describe('a key gate', () => {
  it('never runs more calls at once than its concurrency', async () => {
    const gate = createRateGate(3);
    let running = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 10 }, () =>
        gate.run(async () => {
          running += 1;
          most = Math.max(most, running);
          await modelWork(10);
          running -= 1;
        }),
      ),
    );
    expect(most).toBe(3);
  });

  it('pauses every call after a retry-after, and a call waits when the tokens left do not cover it', async () => {
    const gate = createRateGate(4);
    gate.observe(429, new Headers({ 'retry-after-ms': '150' }));
    const started = Date.now();
    await gate.run(async () => undefined);
    expect(Date.now() - started).toBeGreaterThanOrEqual(130); // 150 ms, less the clock's and timers' slack

    gate.observe(
      200,
      new Headers({ 'x-ratelimit-remaining-tokens': '1000', 'x-ratelimit-reset-tokens': '200ms' }),
    );
    const small = Date.now();
    await gate.run(async () => undefined, { estimatedTokens: 600 });
    expect(Date.now() - small).toBeLessThan(100);
    // 400 tokens are left of the window: the next 600 wait for its reset.
    await gate.run(async () => undefined, { estimatedTokens: 600 });
    expect(Date.now() - small).toBeGreaterThanOrEqual(180);
  });

  it('ends a wait with the caller’s abort reason', async () => {
    const gate = createRateGate(1);
    gate.observe(429, new Headers({ 'retry-after': '30' }));
    const controller = new AbortController();
    const reason = new Error('stopped by the caller');
    const waiting = gate.run(async () => 'ran', { signal: controller.signal });
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });

  it('is one gate per endpoint and key, whose cap follows the latest config', () => {
    const first = rateGateFor('http://127.0.0.1:1/gate-test', 'key-a', 2);
    expect(rateGateFor('http://127.0.0.1:1/gate-test', 'key-a', 5)).toBe(first);
    expect(first.concurrency).toBe(5);
    expect(rateGateFor('http://127.0.0.1:1/gate-test', 'key-b', 5)).not.toBe(first);
  });
});

describe('a 429 with retry-after pauses every call of the key', () => {
  it.each(providers)(
    '$provider: the call that met it and a call started during the pause both wait',
    async (provider) => {
      const { server, model } = await onFakeServer(provider, {
        apiKey: 'k-429',
        maxRetries: 2,
        concurrency: 4,
      });
      server.enqueue(faults.rateLimited(0.4));
      server.setDefault({ json: answer });

      const first = model.generateObject(request);
      // The second call starts once the first was answered 429: the key's gate is paused then.
      const gate = rateGateFor(server.url, 'k-429', 4);
      await eventually(() => gate.pausedUntil > Date.now(), 5_000, 'the gate to pause', 2);
      const second = await model.generateObject(request);
      const firstResult = await first;

      const [limited, ...rest] = server.requests;
      expect(firstResult.attempts).toBe(2);
      expect(second.attempts).toBe(1);
      expect(rest).toHaveLength(2);
      for (const later of rest) expect(later.receivedAt - limited!.receivedAt).toBeGreaterThanOrEqual(390);
    },
  );
});
