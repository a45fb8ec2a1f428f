import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  consolidationsThisMonth,
  costOfCall,
  describeBudgetWait,
  evaluateBudget,
  formatUsd,
  priceFor,
  spaceBudget,
} from '../../src/cost/index.js';
import { ConfigFile } from '../../src/config/schema.js';
import { serializeRunRecord, type RunRecord } from '../../src/space/index.js';
import { maintenanceSummary } from '../../src/space/run-summary.js';
import { tempDirRemovedAfterTest } from '../support/fixtures.js';

const MILLION = { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

describe('price table', () => {
  it('prices Claude Haiku 4.5 at list price: $1 in, $5 out, $1.25 cache write, $0.10 cache read per MTok', () => {
    const price = priceFor('claude-haiku-4-5')!;
    expect(costOfCall(MILLION, price)).toBeCloseTo(1, 9);
    expect(costOfCall({ ...MILLION, inputTokens: 0, outputTokens: 1_000_000 }, price)).toBeCloseTo(5, 9);
    expect(costOfCall({ ...MILLION, inputTokens: 0, cacheWriteTokens: 1_000_000 }, price)).toBeCloseTo(
      1.25,
      9,
    );
    expect(
      costOfCall({ ...MILLION, inputTokens: 0, cacheWriteTokens: 1_000_000 }, price, { cacheTtl1h: true }),
    ).toBeCloseTo(2, 9);
    expect(costOfCall({ ...MILLION, inputTokens: 0, cacheReadTokens: 1_000_000 }, price)).toBeCloseTo(0.1, 9);
  });

  it('halves every figure in batch mode', () => {
    const price = priceFor('claude-haiku-4-5')!;
    const usage = { inputTokens: 3000, outputTokens: 500, cacheReadTokens: 4000, cacheWriteTokens: 4000 };
    expect(costOfCall(usage, price, { batch: true })).toBeCloseTo(costOfCall(usage, price) / 2, 12);
  });

  it('matches dated model names and provider labels, and uses the long-context tier of Haiku 5.5 past 100K', () => {
    expect(priceFor('claude-haiku-4-5-20251001')).toBe(priceFor('claude-haiku-4-5'));
    expect(priceFor('anthropic:claude-haiku-5-5')).toBe(priceFor('claude-haiku-5-5'));
    const haiku55 = priceFor('claude-haiku-5-5')!;
    expect(costOfCall({ ...MILLION, inputTokens: 100_000 }, haiku55)).toBeCloseTo(0.01, 9);
    expect(costOfCall({ ...MILLION, inputTokens: 100_001 }, haiku55)).toBeCloseTo(0.0500005, 9);
  });

  it('knows no price for an unknown model unless model.price gives one', () => {
    expect(priceFor('llama3.1:8b')).toBeUndefined();
    const price = priceFor('llama3.1:8b', { inputPerMTok: 2, outputPerMTok: 4 })!;
    expect(
      costOfCall(
        { inputTokens: 500_000, outputTokens: 250_000, cacheReadTokens: 0, cacheWriteTokens: 0 },
        price,
      ),
    ).toBeCloseTo(2, 9);
    expect(price.cacheReadPerMTok).toBeCloseTo(0.2, 9);
  });

  it('accepts model.price and limits.monthlyBudgetUsd in the config and rejects a negative price', () => {
    const parsed = ConfigFile.parse({
      model: { price: { inputPerMTok: 0, outputPerMTok: 0 } },
      limits: { monthlyBudgetUsd: 5 },
    });
    expect(parsed.limits.monthlyBudgetUsd).toBe(5);
    expect(ConfigFile.safeParse({ model: { price: { inputPerMTok: -1, outputPerMTok: 0 } } }).success).toBe(
      false,
    );
  });

  it('formats small sums with four decimals and unknown ones as ?', () => {
    expect(formatUsd(0.00123)).toBe('$0.0012');
    expect(formatUsd(12.345)).toBe('$12.35');
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(undefined)).toBe('?');
  });
});

function record(runId: string, committedAt: string, costUsd: number | undefined, calls = 1): RunRecord {
  const summary = {
    ...maintenanceSummary({ runId, spaceId: 's', reason: '', diff: '', durationMs: 1 }),
    calls,
    costUsd,
  };
  return {
    version: 1,
    runId,
    kind: 'consolidation',
    seq: 1,
    committedAt,
    rollbackOf: undefined,
    summary,
    files: {},
  };
}

describe('monthly budget', () => {
  const now = new Date('2026-12-15T10:00:00Z');

  it('waits until the first of next month once the runs of this month reach the budget', () => {
    const status = evaluateBudget(
      [record('a', '2026-12-01T00:00:00Z', 0.6), record('b', '2026-12-10T00:00:00Z', 0.4)],
      1,
      now,
    );
    expect(status.spentUsd).toBeCloseTo(1, 9);
    expect(status.waiting).toEqual({
      kind: 'monthly-budget',
      spentUsd: status.spentUsd,
      budgetUsd: 1,
      resumesAt: '2027-01-01T00:00:00.000Z',
    });
    expect(describeBudgetWait(status.waiting!)).toContain('limits.monthlyBudgetUsd');
  });

  it('lets runs go on below the budget, without one, and counts unpriced runs apart', () => {
    const runs = [record('a', '2026-12-01T00:00:00Z', 0.5), record('b', '2026-12-02T00:00:00Z', undefined)];
    expect(evaluateBudget(runs, 1, now).waiting).toBeNull();
    expect(evaluateBudget(runs, undefined, now)).toMatchObject({
      budgetUsd: null,
      spentUsd: 0.5,
      unpricedRuns: 1,
      month: '2026-12',
    });
  });

  it('reads only the consolidation records committed this month from the memory directory', async () => {
    const memoryDir = tempDirRemovedAfterTest('budget');
    const runs = join(memoryDir, '.dreamd', 'runs');
    mkdirSync(runs, { recursive: true });
    const write = (name: string, run: RunRecord) => writeFileSync(join(runs, name), serializeRunRecord(run));
    write('run-20261130T235900Z-aaa.json', record('late-nov', '2026-12-01T00:01:00Z', 0.25));
    write('run-20261110T100000Z-bbb.json', record('november', '2026-11-10T10:00:00Z', 9));
    write('run-20261205T100000Z-ccc.json', record('december', '2026-12-05T10:00:00Z', 0.5));
    write('rollback-20261206T100000Z-ddd.json', {
      ...record('undo', '2026-12-06T10:00:00Z', 7),
      kind: 'rollback',
    });
    writeFileSync(join(runs, 'run-20261207T100000Z-eee.json'), '{ not json');
    const found = await consolidationsThisMonth(memoryDir, now);
    expect(found.map((run) => run.runId).sort()).toEqual(['december', 'late-nov']);
    const status = await spaceBudget(memoryDir, 0.75, now);
    expect(status.spentUsd).toBeCloseTo(0.75, 9);
    expect(status.waiting?.kind).toBe('monthly-budget');
    expect((await spaceBudget(join(memoryDir, 'missing'), 1, now)).spentUsd).toBe(0);
  });
});
