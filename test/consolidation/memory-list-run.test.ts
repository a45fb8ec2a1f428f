import { afterEach, describe, expect, it } from 'vitest';
import { loadMemory } from '../../src/space/index.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { spaceWithLongMemory } from './helpers.js';
import { isUpdateCheckRequest } from '../../harness/scripted-extractor.js';
import { RUN_NOW } from '../support/space.js';

let server: FakeAnthropicServer | undefined;
afterEach(async () => {
  await server?.close();
});

describe('memory list over a run of several calls', () => {
  it('caches one stable prefix for every call and shows later calls the facts of earlier ones', async () => {
    // Claude Haiku 4.5 caches nothing under 4,096 tokens; the fake does the same.
    server = await startFakeAnthropicServer({ minCacheableTokens: 4096 });
    // One call after another: every later call is shown the facts of the ones before it.
    const { test, consolidate } = await spaceWithLongMemory(server, {
      digestTokensPerCall: 5000,
      concurrency: 1,
      now: RUN_NOW,
    });
    expect((await loadMemory(test.space.memoryDir)).facts.length).toBeGreaterThan(200);

    const before = server.requests.length;
    const summary = await consolidate();
    expect(summary.status).toBe('completed');
    // The extraction calls (the update check, if any, is a small call of its own, not on the cached prefix).
    const requests = server.requests.slice(before).filter((request) => !isUpdateCheckRequest(request));
    expect(requests.length).toBeGreaterThanOrEqual(2);

    const prefixes = requests.map((request) => {
      const content = request.body.messages[0]!.content as unknown as {
        text: string;
        cache_control?: unknown;
      }[];
      expect(content[0]!.cache_control).toEqual({ type: 'ephemeral' });
      return content[0]!.text;
    });
    expect(new Set(prefixes).size).toBe(1);
    expect(summary.usage.cacheReadTokens).toBeGreaterThan(0);
    expect(summary.usage.cacheWriteTokens).toBeGreaterThan(0);

    const withRunFacts = requests.filter((request) => /^run-1 \| /m.test(request.prompt));
    expect(withRunFacts.length).toBeGreaterThan(0);
    expect(requests.indexOf(withRunFacts[0]!)).toBeGreaterThan(0);

    const memory = await loadMemory(test.space.memoryDir);
    const home = memory.facts.filter((fact) => fact.title === 'Home address' && fact.status === 'active');
    expect(home.map((fact) => fact.body)).toEqual(['Lives in Porto since 2026-11-19.']);
  });
});
