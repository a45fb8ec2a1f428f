import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SpaceStatus } from '../../src/cli/space-status.js';
import { createConsolidator } from '../../src/consolidation/run.js';
import type { RunSummary } from '../../src/core/run.js';
import { createModel } from '../../src/model/index.js';
import { readBatchInFlight } from '../../src/space/index.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import { cliAt, useFakeAnthropic } from '../support/fixtures.js';
import { createTestSpace, EXAMPLE_SESSIONS_DIR, type TestSpace } from '../support/space.js';

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });
const ENV = { DREAMD_BATCH_POLL_SECONDS: '0.01' };

/** A space whose first sessions were consolidated by a synchronous run, and whose later ones wait in a batch. */
async function spaceWithPendingBatch(): Promise<{ test: TestSpace; firstRun: string }> {
  const test = createTestSpace({
    modelUrl: fake.url,
    examples: ['2026-11-02-lisbon-delivery.json', '2026-11-05-dinner-friday.json'],
    env: ENV,
  });
  const first = await cliAt(test.root, fake.url, ['consolidate', '--force', '--json'], ENV);
  expect(first.code).toBe(0);
  const firstRun = first.data<{ results: { summary: RunSummary }[] }>().results[0]!.summary.runId;
  cpSync(EXAMPLE_SESSIONS_DIR, join(test.root, 'sessions'), { recursive: true });
  fake.server.setBatchBehaviour({ pollsBeforeEnd: 1_000 });
  const crash = createConsolidator({
    config: test.config,
    model: () => createModel(test.config.model),
    faultInjection: (step) => {
      if (step === 'after-batch-submit') throw new Error('killed');
    },
  });
  await expect(crash(test.space, { force: true, dryRun: false, trigger: 'schedule' })).rejects.toThrow(
    'killed',
  );
  expect(fake.server.batches).toHaveLength(1);
  return { test, firstRun };
}

describe('batch mode in the CLI', () => {
  it('consolidate --batch sends one manual run through a message batch and records its price', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true, env: ENV });
    const run = await cliAt(test.root, fake.url, ['consolidate', '--batch', '--force', '--json'], ENV);
    expect(run.code).toBe(0);
    const summary = run.data<{ via: string; results: { summary: RunSummary }[] }>();
    expect(summary.via).toBe('in-process');
    expect(summary.results[0]!.summary.batch).toMatchObject({
      id: fake.server.batches[0]!.id,
      outcome: 'collected',
      priceFactor: 0.5,
    });
    expect(fake.server.batches).toHaveLength(1);
    const runId = summary.results[0]!.summary.runId;
    const history = await cliAt(test.root, fake.url, ['history', '--json'], ENV);
    expect(history.data<{ runId: string; batch: unknown }[]>()[0]).toMatchObject({
      runId,
      batch: { batchedCalls: summary.results[0]!.summary.calls, priceFactor: 0.5 },
    });
    expect((await cliAt(test.root, fake.url, ['history'], ENV)).stdout).toEqual(
      expect.stringMatching(/ \(batch\)\n/),
    );
    const shown = await cliAt(test.root, fake.url, ['history', 'show', runId], ENV);
    expect(shown.stdout).toEqual(
      expect.stringMatching(
        /batch {6}msgbatch_fake_1: \d+ calls? answered by the batch at 0\.5 × list price \(\$[\d.]+ instead of \$[\d.]+ at list price\)/,
      ),
    );
    const status = await cliAt(test.root, fake.url, ['status', '--json'], ENV);
    expect(status.data<SpaceStatus[]>()[0]!.batch).toEqual({
      mode: expect.stringMatching(/^scheduled: /),
      pending: null,
    });
  });

  it('consolidate --batch says in its summary which calls the batch answered and at what price', async () => {
    const test = createTestSpace({ modelUrl: fake.url, examples: true, env: ENV });
    const run = await cliAt(test.root, fake.url, ['consolidate', '--batch', '--force'], ENV);
    expect(run.code).toBe(0);
    expect(run.stdout).toEqual(
      expect.stringMatching(
        /\n {2}batch {6}msgbatch_fake_1: \d+ calls? answered by the batch at 0\.5 × list price \(/,
      ),
    );
  });

  it('status shows a pending batch and its age; batch cancel gives it up', async () => {
    const { test } = await spaceWithPendingBatch();
    const status = await cliAt(test.root, fake.url, ['status', '--json'], ENV);
    const pending = status.data<SpaceStatus[]>()[0]!.batch.pending;
    expect(pending).toMatchObject({ id: fake.server.batches[0]!.id, sessions: 5 });
    expect(pending!.ageMs).toBeGreaterThanOrEqual(0);
    const human = await cliAt(test.root, fake.url, ['status'], ENV);
    expect(human.stdout).toEqual(expect.stringMatching(/batch {6}msgbatch_fake_1 pending for \d+ min/));

    const cancel = await cliAt(test.root, fake.url, ['batch', 'cancel', '--json'], ENV);
    expect(cancel.code).toBe(0);
    expect(cancel.data()).toEqual({ canceled: [{ space: 'default', batchId: 'msgbatch_fake_1' }] });
    expect(fake.server.batches[0]!.canceled).toBe(true);
    expect(await readBatchInFlight(test.space.memoryDir)).toBeUndefined();
    const again = await cliAt(test.root, fake.url, ['batch', 'cancel'], ENV);
    expect(again.stdout).toBe('space default: no pending batch\n');
  });

  it('rollback cancels the pending batch', async () => {
    const { test, firstRun } = await spaceWithPendingBatch();
    const rollback = await cliAt(test.root, fake.url, ['rollback', firstRun, '--json'], ENV);
    expect(rollback.code).toBe(0);
    expect(rollback.data()).toMatchObject({ canceledBatch: 'msgbatch_fake_1' });
    expect(fake.server.batches[0]!.canceled).toBe(true);
    expect(await readBatchInFlight(test.space.memoryDir)).toBeUndefined();
  });
});
