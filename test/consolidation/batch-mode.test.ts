import { afterEach, describe, expect, it } from 'vitest';
import { createConsolidator } from '../../src/consolidation/run.js';
import type { RunRequest } from '../../src/core/run.js';
import { listRuns, loadMemory, readLedger, readPendingBatch } from '../../src/space/index.js';
import { createModel } from '../../src/model/index.js';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../harness/fake-anthropic-server.js';
import { EXAMPLE_FACTS, scriptedExtractor } from '../../harness/scripted-extractor.js';
import { createTestSpace, snapshotDirectory, type TestSpace } from '../support/space.js';

const scheduled: RunRequest = { force: true, dryRun: false, trigger: 'schedule' };
const manual: RunRequest = { force: true, dryRun: false, trigger: 'manual' };
const NOW = new Date('2026-11-29T12:00:00Z');
const USAGE = { inputTokens: 2000, outputTokens: 300, cacheReadTokens: 0, cacheWriteTokens: 0 };

let server: FakeAnthropicServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function space(url: string, env: Record<string, string> = {}): TestSpace {
  return createTestSpace({
    modelUrl: url,
    examples: true,
    env: { DREAMD_BATCH_POLL_SECONDS: '0.01', DREAMD_DIGEST_TOKENS_PER_CALL: '60000', ...env },
  });
}

function consolidator(test: TestSpace, faultInjection?: (step: string) => void) {
  return createConsolidator({
    config: test.config,
    model: () => createModel(test.config.model, { retryBaseDelayMs: 1, retryMaxDelayMs: 5 }),
    now: () => NOW,
    ...(faultInjection === undefined ? {} : { faultInjection }),
  });
}

async function activeTitles(test: TestSpace): Promise<string[]> {
  return (await loadMemory(test.space.memoryDir)).facts
    .filter((fact) => fact.status === 'active')
    .map((fact) => `${fact.type}: ${fact.title}: ${fact.body}`)
    .sort();
}

describe('batch mode', () => {
  it('consolidates a scheduled run through a message batch like a synchronous run, at half the cost', async () => {
    server = await startFakeAnthropicServer({ usage: USAGE });
    server.setDefault(scriptedExtractor(EXAMPLE_FACTS));
    const synchronous = space(server.url);
    const sync = await consolidator(synchronous)(synchronous.space, manual);
    expect(sync.status).toBe('completed');
    expect(server.batches).toHaveLength(0);
    const syncRequests = server.requests.length;

    server.setBatchBehaviour({ pollsBeforeEnd: 2 });
    const batched = space(server.url);
    const run = await consolidator(batched)(batched.space, scheduled);
    expect(run.status).toBe('completed');
    expect(server.batches).toHaveLength(1);
    // Three looks, the third finds it ended; the SDK's results() looks once more for the results URL.
    expect(server.batches[0]!.retrieves).toBe(4);
    expect(server.requests.length - syncRequests).toBe(sync.calls);
    expect(run.calls).toBe(sync.calls);
    expect(run.batch).toMatchObject({ id: server.batches[0]!.id, batchedCalls: sync.calls, outcome: 'collected' });
    expect(run.costUsd).toBeCloseTo(sync.costUsd! / 2, 9);
    expect(run.batch!.listCostUsd).toBeCloseTo(sync.costUsd!, 9);
    expect(await activeTitles(batched)).toEqual(await activeTitles(synchronous));
    expect(await readPendingBatch(batched.space.memoryDir)).toBeUndefined();
    const [record] = await listRuns(batched.space.memoryDir);
    expect(record?.summary.batch).toEqual(run.batch);
  });
});
