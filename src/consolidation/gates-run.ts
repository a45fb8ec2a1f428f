/**
 * Whether a run goes on: the batch it collects is still due, no proposal awaits a decision, a batch it
 * collects was not given up, the gates are open and the month's budget has room. A run that stops here
 * writes no memory.
 */
import { describeBudgetWait, spaceBudget } from '../cost/index.js';
import { evaluateGates } from '../core/gates.js';
import { readBatchInFlight } from '../space/index.js';
import { awaitingDecision, type RunSummary } from '../core/run.js';
import { batchFailure, recordUnreadableResults } from './batch/batch.js';
import type { OrientedRun, SpaceState } from './orient-run.js';
import type { RunContext } from './run-context.js';
import { endRun, skipped } from './run-end.js';

/**
 * A collecting run's check under the locks: another process may have collected the batch while this one
 * waited without them; results that could not be read are recorded and fail the run.
 */
export async function collectStillDue(ctx: RunContext): Promise<RunSummary | undefined> {
  const { stage, space } = ctx;
  if (stage?.kind !== 'collect') return undefined;
  const still = await readBatchInFlight(space.memoryDir);
  if (still?.batchId !== stage.pending.batchId) {
    return skipped(ctx, { reason: `batch ${stage.pending.batchId} was already collected` });
  }
  if (stage.unreadable !== undefined) {
    throw await recordUnreadableResults(space, still, stage.unreadable, ctx.now());
  }
  return undefined;
}

/** Approval mode: while a proposal that still fits memory awaits a decision, the run waits for it. */
export function awaitingProposal(ctx: RunContext, state: SpaceState): RunSummary | undefined {
  const pending = state.proposals?.pending;
  if (pending === undefined) return undefined;
  return skipped(ctx, { reason: awaitingDecision(pending.runId, ctx.space.id) });
}

/** Why the run stops once it knows its sessions (batch given up, gates closed, budget spent), or undefined. */
export async function stopBeforeGather(ctx: RunContext, run: OrientedRun): Promise<RunSummary | undefined> {
  const { stage } = ctx;
  if (stage?.kind === 'collect' && stage.failed !== undefined) {
    return endRun(ctx, skipped(ctx, batchFailure(stage, run.scan.entries)));
  }
  return gatesClosed(ctx, run) ?? (await budgetSpent(ctx, run));
}

/** The gates' verdict, as a skipped run when closed. */
function gatesClosed(ctx: RunContext, run: OrientedRun): RunSummary | undefined {
  const { config, stage } = ctx;
  const gates = evaluateGates({
    inspection: {
      spaceId: ctx.space.id,
      settledNew: run.counted.settled,
      live: run.counted.live,
      broken: [],
      lastSuccessfulRunAt: run.lastRun?.committedAt,
      // A session bigger than one run, started by an earlier run, continues without waiting for the gates.
      continuing: Object.values(run.ledger.sessions).some((entry) => entry.progress !== undefined),
    },
    gates: config.gates,
    now: ctx.now(),
    // A batch being collected was paid for: its sessions go on whatever the gates say now.
    force: ctx.request.force || stage?.kind === 'collect',
  });
  return gates.open ? undefined : skipped(ctx, { reason: gates.reasons.join('; ') });
}

/** With a monthly budget spent, every settled session waits for the month the budget has room again. */
async function budgetSpent(ctx: RunContext, run: OrientedRun): Promise<RunSummary | undefined> {
  const { config, stage, space } = ctx;
  if (config.limits.monthlyBudgetUsd === undefined || stage?.kind === 'collect') return undefined;
  const budget = await spaceBudget(space.memoryDir, config.limits.monthlyBudgetUsd, ctx.now());
  if (budget.waiting === null) return undefined;
  const detail = describeBudgetWait(budget.waiting);
  return endRun(
    ctx,
    skipped(ctx, {
      reason: detail,
      waiting: budget.waiting,
      unconsolidated: run.scan.entries
        .filter((entry) => entry.status === 'settled')
        .map((entry) => ({
          sessionId: entry.sessionId ?? entry.file,
          reason: 'monthly-budget' as const,
          detail,
        })),
    }),
  );
}
