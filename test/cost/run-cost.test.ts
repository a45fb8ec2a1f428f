import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HistoryRow } from '../../src/cli/commands/history.js';
import { inspectSpaceDetailed } from '../../src/consolidation/inspect.js';
import { costOfCall, priceFor, spaceBudget } from '../../src/cost/index.js';
import { ConfigError } from '../../src/errors.js';
import { listRuns } from '../../src/space/index.js';
import { runCliCaptured } from '../support/cli.js';
import { EXAMPLE_FACTS } from '../../harness/scripted-extractor.js';
import {
  createTestSpace,
  type TestSpace,
  fastConsolidator,
  FORCED_RUN,
  EXAMPLE_SESSIONS_DIR,
} from '../support/space.js';
import { modelEnv, tempDirRemovedAfterTest, useFakeAnthropic } from '../support/fixtures.js';

const NOW = new Date('2026-12-15T12:00:00Z');

const fake = useFakeAnthropic({ facts: EXAMPLE_FACTS });

function consolidatorFor(test: TestSpace) {
  return fastConsolidator(test.config, { now: () => NOW });
}

describe('cost of a run', () => {
  it('records the dollars of every call at the model list price in the run record', async () => {
    const usage = { inputTokens: 1000, outputTokens: 100, cacheReadTokens: 4000, cacheWriteTokens: 0 };
    await fake.restart({ usage });
    const test = createTestSpace({
      modelUrl: fake.url,
      examples: true,
      env: { DREAMD_MODEL: 'claude-haiku-4-5' },
    });
    const summary = await consolidatorFor(test)(test.space, FORCED_RUN);
    expect(summary.status).toBe('completed');
    expect(fake.server.requests.length).toBe(summary.calls);
    // $1/MTok × 1000 + $5/MTok × 100 + $0.10/MTok × 4000 = $0.0019 a call.
    expect(costOfCall(usage, priceFor('claude-haiku-4-5')!)).toBeCloseTo(0.0019, 9);
    expect(summary.costUsd).toBeCloseTo(0.0019 * summary.calls, 9);
    const [run] = await listRuns(test.space.memoryDir);
    expect(run!.summary.costUsd).toBe(summary.costUsd);
  });

  it('leaves the cost unknown for a model without a price, and refuses a budget it could not enforce', async () => {
    const test = createTestSpace({
      modelUrl: fake.url,
      examples: true,
      env: { DREAMD_MODEL: 'my-own-model' },
    });
    const summary = await consolidatorFor(test)(test.space, FORCED_RUN);
    expect(summary.calls).toBeGreaterThan(0);
    expect(summary.costUsd).toBeUndefined();
    const budgeted = createTestSpace({
      modelUrl: fake.url,
      env: { DREAMD_MODEL: 'my-own-model', DREAMD_MONTHLY_BUDGET_USD: '1' },
    });
    expect(() => consolidatorFor(budgeted)).toThrow(ConfigError);
    expect(() => consolidatorFor(budgeted)).toThrow(/model\.price/);
  });

  it('makes the next run wait, with the reason, once the month budget is spent', async () => {
    const test = createTestSpace({
      modelUrl: fake.url,
      examples: true,
      env: { DREAMD_MODEL: 'claude-haiku-4-5', DREAMD_MONTHLY_BUDGET_USD: '0.000001' },
    });
    const first = await consolidatorFor(test)(test.space, FORCED_RUN);
    expect(first.status).toBe('completed');
    const calls = fake.server.requests.length;
    const second = await consolidatorFor(test)(test.space, FORCED_RUN);
    expect(second.status).toBe('skipped');
    expect(second.waiting).toMatchObject({
      kind: 'monthly-budget',
      budgetUsd: 0.000001,
      resumesAt: '2027-01-01T00:00:00.000Z',
    });
    expect(second.reason).toMatch(/monthly budget reached.*runs wait until 2027-01-01/);
    expect(fake.server.requests.length).toBe(calls);
    expect((await spaceBudget(test.space.memoryDir, 0.000001, NOW)).spentUsd).toBe(first.costUsd);
    // The scheduler's inspection closes the gates too, so a spent space is not queued at every tick.
    const { inspection } = await inspectSpaceDetailed(test.space, { config: test.config, now: () => NOW });
    expect(inspection.budget).toMatchObject({
      kind: 'monthly-budget',
      resumesAt: '2027-01-01T00:00:00.000Z',
    });
  });
});

describe('dreamd history', () => {
  it('shows the cost of each run in the table and in --json', async () => {
    const root = tempDirRemovedAfterTest('cost-history');
    cpSync(EXAMPLE_SESSIONS_DIR, join(root, 'sessions'), {
      recursive: true,
    });
    const env = { ...modelEnv(fake.url), DREAMD_MODEL: 'claude-haiku-4-5' };
    expect((await runCliCaptured(['consolidate', '--force'], { cwd: root, env })).code).toBe(0);
    const json = await runCliCaptured(['history', '--json'], { cwd: root, env });
    const [row] = json.data<HistoryRow[]>();
    expect(row!.costUsd).toBeGreaterThan(0);
    const table = await runCliCaptured(['history'], { cwd: root, env });
    expect(table.stdout).toContain('COST');
    expect(table.stdout).toMatch(/\$0\.\d{4}/);
  });
});
