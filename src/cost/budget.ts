/**
 * The monthly budget of a space (`limits.monthlyBudgetUsd`): the dollars its consolidation runs recorded in the
 * current calendar month (UTC), and whether the next run must wait for the next month.
 *
 * What counts: the `costUsd` of every consolidation run record committed this month. What does not: dry runs
 * and failed runs (they leave no record), records of runs without a price (`costUsd` absent). A run is checked
 * before it starts, so the last run of a month may pass the budget by at most its own cost.
 */
import path from 'node:path';
import {
  RUNS_DIR,
  parseRunRecord,
  readTextIfExists,
  runRecordNames,
  type RunRecord,
} from '../space/index.js';
import type { BudgetWait } from '../core/budget.js';
import { formatUsd } from './prices.js';

export type { BudgetWait } from '../core/budget.js';

/** The budget as `status` shows it. */
export interface BudgetStatus {
  /** `limits.monthlyBudgetUsd`, or null when the space has no budget. */
  readonly budgetUsd: number | null;
  readonly spentUsd: number;
  /** Month the figure covers, `YYYY-MM` (UTC). */
  readonly month: string;
  /** Runs recorded this month without a cost (no price known when they ran). */
  readonly unpricedRuns: number;
  /** Set when the budget is reached: runs wait until `resumesAt`. */
  readonly waiting: BudgetWait | null;
}

function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

function nextMonthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

/** `run-20261201T101500Z-abc123.json` → "20261201T101500Z" (see `newRunId`). */
const STAMP = /^[a-z]+-(\d{8}T\d{6}Z)-[A-Za-z0-9]+\.json$/;

function stampOf(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Consolidation records committed in the month of `now`. Only records whose name stamp (the run's start) is
 * at most a day before the month are read, so the check does not grow with the history; records not named
 * by `newRunId` are always read. Unreadable records are skipped, as `listRuns` skips them.
 */
export async function consolidationsThisMonth(memoryDir: string, now: Date): Promise<RunRecord[]> {
  const names = await runRecordNames(memoryDir);
  const start = monthStart(now);
  // A run that started before midnight of the 1st may commit after it: read one day further back.
  const earliestStamp = stampOf(new Date(start.getTime() - 86_400_000));
  const runs: RunRecord[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const stamp = STAMP.exec(name)?.[1];
    if (stamp !== undefined && stamp < earliestStamp) continue;
    const relative = `${RUNS_DIR}/${name}`;
    const text = await readTextIfExists(path.join(memoryDir, relative));
    if (text === null) continue;
    let run: RunRecord;
    try {
      run = parseRunRecord(text, relative);
    } catch {
      continue;
    }
    const committed = Date.parse(run.committedAt);
    if (
      run.kind === 'consolidation' &&
      committed >= start.getTime() &&
      committed < nextMonthStart(now).getTime()
    ) {
      runs.push(run);
    }
  }
  return runs;
}

/** Pure: the budget status from this month's records. */
export function evaluateBudget(
  runs: readonly Pick<RunRecord, 'summary'>[],
  budgetUsd: number | undefined,
  now: Date,
): BudgetStatus {
  let spent = 0;
  let unpriced = 0;
  for (const run of runs) {
    const cost = run.summary.costUsd;
    if (cost === undefined) {
      if (run.summary.calls > 0) unpriced += 1;
    } else spent += cost;
  }
  const spentUsd = Math.round(spent * 1_000_000) / 1_000_000;
  const reached = budgetUsd !== undefined && spentUsd >= budgetUsd;
  return {
    budgetUsd: budgetUsd ?? null,
    spentUsd,
    month: now.toISOString().slice(0, 7),
    unpricedRuns: unpriced,
    waiting: reached
      ? { kind: 'monthly-budget', spentUsd, budgetUsd, resumesAt: nextMonthStart(now).toISOString() }
      : null,
  };
}

/** The budget of one space now: what `dreamd status` shows and what a run checks before it starts. */
export async function spaceBudget(
  memoryDir: string,
  budgetUsd: number | undefined,
  now: Date,
): Promise<BudgetStatus> {
  return evaluateBudget(await consolidationsThisMonth(memoryDir, now), budgetUsd, now);
}

/** One line for a skipped run's `reason` and for `status`. */
export function describeBudgetWait(wait: BudgetWait): string {
  return (
    `monthly budget reached: ${formatUsd(wait.spentUsd)} of ${formatUsd(wait.budgetUsd)} spent this month; ` +
    `runs wait until ${wait.resumesAt} (raise limits.monthlyBudgetUsd to go on now)`
  );
}
