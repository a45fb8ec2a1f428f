import { CurationConfig } from '../../src/config/schema.js';
import { cpSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createConsolidator } from '../../src/consolidation/run.js';
import type { RunRequest } from '../../src/core/run.js';
import { loadMemory } from '../../src/space/index.js';
import { createModel } from '../../src/model/index.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { EXAMPLE_FACTS, scriptedExtractor } from '../../harness/scripted-extractor.js';
import { createTestSpace, EXAMPLE_SESSIONS_DIR } from '../support/space.js';

const forced: RunRequest = { force: true, dryRun: false, trigger: 'manual' };
const NOW = new Date('2026-11-29T12:00:00Z');

let server: FakeAnthropicServer | undefined;
afterEach(async () => {
  await server?.close();
});

const filler = Array.from({ length: 300 }, (_, index) => ({
  type: 'project',
  title: `Service ${index} owns queue ${index}`,
  body: `Service ${index} runs the nightly job of queue ${index} and alerts team ${index % 7}.`,
  why: null,
  howToApply: null,
  observed: '2026-11-02',
  sources: [],
  replaces: [],
  confidence: null,
}));

describe('memory list over a run of several calls', () => {
  it('caches one stable prefix for every call and shows later calls the facts of earlier ones', async () => {
    // Claude Haiku 4.5 caches nothing under 4,096 tokens; the fake does the same.
    server = await startFakeAnthropicServer({ minCacheableTokens: 4096 });
    const scripted = scriptedExtractor(EXAMPLE_FACTS);
    let first = true;
    server.setDefault((request) => {
      const reply = scripted(request) as { json: { facts: unknown[] } };
      if (!first) return reply;
      first = false;
      return { json: { facts: [...reply.json.facts, ...filler] } };
    });
    const test = createTestSpace({
      modelUrl: server.url,
      examples: ['2026-11-02-lisbon-delivery.json'],
      env: { DREAMD_DIGEST_TOKENS_PER_CALL: '5000', DREAMD_MEMORY_TOKENS_PER_CALL: '4000' },
    });
    // The filler is 200+ facts in one answer, over the default per-answer and per-session limits.
    const limits = { ...test.config.limits, maxFactsPerAnswer: 1_000, maxFactsPerSession: 1_000 };
    // One call after another: every later call is shown the facts of the ones before it.
    const model = { ...test.config.model, concurrency: 1 };
    // Extraction calls only: the 200+ filler facts would pass the curation budget and add a call of their own.
    const curation = { ...CurationConfig.parse({}), enabled: false };
    const consolidate = createConsolidator({
      config: { ...test.config, limits, model, curation },
      model: () => createModel(model),
      now: () => NOW,
    });
    expect((await consolidate(test.space, forced)).status).toBe('completed');
    expect((await loadMemory(test.space.memoryDir)).facts.length).toBeGreaterThan(200);

    cpSync(EXAMPLE_SESSIONS_DIR, test.space.sessionsDir, { recursive: true });
    const before = server.requests.length;
    const summary = await consolidate(test.space, forced);
    expect(summary.status).toBe('completed');
    const requests = server.requests.slice(before);
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
