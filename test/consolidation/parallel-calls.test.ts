import { isUpdateCheckRequest } from '../../harness/scripted-extractor.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createConsolidator } from '../../src/consolidation/run.js';
import { resolveRunReplaces } from '../../src/consolidation/extraction/extract.js';
import { checkItems } from '../../src/consolidation/extraction/update-check.js';
import type { ExtractedFact } from '../../src/consolidation/extraction/extraction.js';
import { listRuns, loadMemory } from '../../src/space/index.js';
import { createModel } from '../../src/model/index.js';
import {
  faults,
  startFakeAnthropicServer,
  type FakeAnthropicServer,
} from '../../harness/fake-anthropic-server.js';
import { EXAMPLE_FACTS, scriptedExtractor, sessionsInPrompt } from '../../harness/scripted-extractor.js';
import { createTestSpace, FORCED_RUN, RUN_NOW } from '../support/space.js';
import { modelWork } from '../support/eventually.js';
import { spaceWithLongMemory, activeFacts } from './helpers.js';
import { extractedFact } from '../memory/helpers.js';

let server: FakeAnthropicServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A scripted model that takes 60 ms per answer and records which sessions were in flight together. */
function slowScriptedModel(target: FakeAnthropicServer) {
  const scripted = scriptedExtractor(EXAMPLE_FACTS);
  const inFlight: string[][] = [];
  const overlaps: { most: number; sameSessionTogether: string[] } = { most: 0, sameSessionTogether: [] };
  target.setDefault(async (request) => {
    const sessions = sessionsInPrompt(request.prompt).map((session) => session.id);
    const busy = new Set(inFlight.flat());
    overlaps.sameSessionTogether.push(...sessions.filter((id) => busy.has(id)));
    inFlight.push(sessions);
    overlaps.most = Math.max(overlaps.most, inFlight.length);
    await modelWork(60);
    inFlight.splice(inFlight.indexOf(sessions), 1);
    return scripted(request);
  });
  return overlaps;
}

describe('the calls of a run in parallel', () => {
  it('sends calls of different sessions together, the parts of one session one after another, and keeps the same memory', async () => {
    server = await startFakeAnthropicServer();
    const overlaps = slowScriptedModel(server);
    const test = createTestSpace({
      modelUrl: server.url,
      examples: true,
      env: { DREAMD_DIGEST_TOKENS_PER_CALL: '400' },
    });
    const model = { ...test.config.model, concurrency: 4 };
    const limits = { ...test.config.limits, maxCallsPerRun: 200 };
    const summary = await createConsolidator({
      config: { ...test.config, model, limits },
      model: () => createModel(model),
      now: () => RUN_NOW,
    })(test.space, FORCED_RUN);

    expect(summary.status).toBe('completed');
    expect(summary.calls).toBeGreaterThan(6);
    expect(overlaps.most).toBeGreaterThan(1);
    expect(overlaps.most).toBeLessThanOrEqual(4);
    expect(overlaps.sameSessionTogether).toEqual([]);
    // A long session was sent in parts: its parts follow each other in the order of its messages.
    const parts = server.requests.flatMap(
      (request) => request.prompt.match(/^### session \S+ .* part \d+$/gm) ?? [],
    );
    expect(parts.length).toBeGreaterThan(0);

    const active = await activeFacts(test);
    expect(active.map((fact) => fact.title).sort()).toEqual([
      "Doesn't eat spicy food",
      'Home address',
      'No semicolons in TypeScript',
      'Shop API moves to Postgres',
      'Team Grafana dashboard',
      'Usual coffee order',
    ]);
    expect(active.find((fact) => fact.title === 'Home address')?.body).toBe(
      'Lives in Porto since 2026-11-19.',
    );
  });

  it('records the output tokens of every call in the run record', async () => {
    server = await startFakeAnthropicServer({ usage: { outputTokens: 37 } });
    server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const test = createTestSpace({ modelUrl: server.url, examples: true });
    const summary = await createConsolidator({
      config: test.config,
      model: () => createModel(test.config.model),
      now: () => RUN_NOW,
    })(test.space, FORCED_RUN);

    expect(summary.outputTokensPerCall).toEqual(Array.from({ length: summary.calls }, () => 37));
    const [record] = await listRuns(test.space.memoryDir);
    expect(record?.summary.outputTokensPerCall).toEqual(summary.outputTokensPerCall);
  });

  it('stops the calls in flight and fails the run when one call fails for good', async () => {
    server = await startFakeAnthropicServer();
    const overlaps = slowScriptedModel(server);
    server.enqueue(faults.unauthorized());
    const test = createTestSpace({
      modelUrl: server.url,
      examples: true,
      env: { DREAMD_DIGEST_TOKENS_PER_CALL: '400' },
    });
    const model = { ...test.config.model, concurrency: 4 };
    const run = createConsolidator({
      config: { ...test.config, model },
      model: () => createModel(model),
      now: () => RUN_NOW,
    })(test.space, FORCED_RUN);

    await expect(run).rejects.toThrow(/HTTP 401/);
    expect(overlaps.most).toBeLessThanOrEqual(4);
    expect((await loadMemory(test.space.memoryDir)).facts).toEqual([]);
  });
});

describe('a run with a cached prefix', () => {
  it('sends its first call alone, so the calls after it read the prefix from the cache', async () => {
    server = await startFakeAnthropicServer({ minCacheableTokens: 4096 });
    let inFlight = 0;
    const alongside: number[] = [];
    const { consolidate } = await spaceWithLongMemory(server, {
      digestTokensPerCall: 2000,
      concurrency: 4,
      now: RUN_NOW,
      around: async (answer) => {
        alongside.push(inFlight);
        inFlight += 1;
        await modelWork(40);
        inFlight -= 1;
        return answer();
      },
    });
    const before = server.requests.length;
    alongside.length = 0;

    const summary = await consolidate();

    expect(summary.status).toBe('completed');
    expect(server.requests.length - before).toBeGreaterThan(2);
    // The first call of the run met nobody and nobody met it; the next ones went together.
    expect(alongside[0]).toBe(0);
    expect(alongside[1]).toBe(0);
    expect(Math.max(...alongside)).toBeGreaterThan(0);
    expect(summary.usage.cacheWriteTokens).toBeGreaterThan(0);
    // Every extraction call after the first read the prefix (the update check is a small call of its own).
    const extractions = server.requests.slice(before).filter((request) => !isUpdateCheckRequest(request));
    expect(summary.usage.cacheReadTokens).toBeGreaterThanOrEqual(
      (extractions.length - 1) * summary.usage.cacheWriteTokens,
    );
  });
});

describe('facts of calls that could not see each other', () => {
  const fact = (title: string, body: string, observed: string): ExtractedFact =>
    extractedFact({ title, body, observed, sources: [] });
  const none = { index: [], runId: (at: number) => `run-${at + 1}` };

  it('the same type and title: the newer is shown the older in the update check; code links neither', () => {
    const porto = fact('Home address', 'Lives in Porto.', '2026-11-19');
    const lisbon = fact('Home address', 'Lives in Lisbon.', '2026-11-02');
    const coffee = fact('Usual coffee order', 'A flat white.', '2026-11-09');
    const items = checkItems([porto, coffee, lisbon], { ...none, shown: [new Set(), new Set(), new Set()] });
    expect(items.map((item) => [item.position, item.neighbours.map((n) => n.id)])).toEqual([[0, ['run-3']]]);
    // Without the model's `replaces`, both stay: the model, shown both, says which is current.
    expect(resolveRunReplaces([porto, coffee, lisbon]).map((candidate) => candidate.replaces)).toEqual([
      [],
      [],
      [],
    ]);
  });

  it('rules alike but for what they apply to go to the model too, never linked by code', () => {
    const methods = fact('Try statements in methods', 'Use try statements in methods.', '2026-11-02');
    const functions = fact('Try statements in functions', 'Use try statements in functions.', '2026-11-19');
    const items = checkItems([functions, methods], { ...none, shown: [new Set(), new Set()] });
    expect(items.map((item) => [item.position, item.neighbours.map((n) => n.id)])).toEqual([[0, ['run-2']]]);
  });

  it('leaves out a fact its call was shown', () => {
    const first = fact('Home address', 'Lives in Lisbon.', '2026-11-02');
    const second = fact('Home address', 'Lives in Porto.', '2026-11-19');
    expect(checkItems([first, second], { ...none, shown: [new Set(), new Set(['run-1'])] })).toEqual([]);
  });
});
