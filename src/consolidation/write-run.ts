/**
 * The run's write step: a dry run returns its summary; a run with nothing to write ends skipped; in approval
 * mode a run that would change files stages its proposal; else memory, quarantine, ledger and run record are
 * committed in one staged transaction, after checking the lock is still the run's (the fence). A run that
 * lost its lock writes nothing and its sessions wait.
 */
import { HistoryConfig } from '../config/schema.js';
import { waitingLive } from '../core/gates.js';
import { LockLostError } from '../errors.js';
import { commitMemoryChanges, nextLedgerContent } from '../space/index.js';
import type { LedgerEntry } from '../memory/types.js';
import { awaitingDecision, type RunSummary } from '../core/run.js';
import { proposeRun } from './approval/proposal.js';
import type { RunContext } from './run-context.js';
import type { RunLocks } from './locks-run.js';
import { describeWaiting, endRun } from './run-end.js';
import type { SummarizedRun } from './summarize-run.js';

const DEFAULT_HISTORY = HistoryConfig.parse({});

/** Ends the run as its mode and plan say: dry run, nothing to write, proposal, or commit. */
export async function writeStep(ctx: RunContext, locks: RunLocks, run: SummarizedRun): Promise<RunSummary> {
  const { done, plan } = run;
  if (ctx.request.dryRun) return { ...done, durationMs: ctx.elapsed() };
  if (plan.ledgerEntries.length === 0 && plan.files.size === 0)
    return endRun(ctx, nothingConsolidated(ctx, run));
  const ledgerEntries = progressLedgerEntries(run);
  if (needsApproval(ctx.space, plan.files)) return propose(ctx, run, ledgerEntries);
  return commit(ctx, locks, run, ledgerEntries);
}

/**
 * The ledger entries of the run's sessions. A session consolidated in part: its entry says how far, and
 * never matches the file (mtimeMs -1), so the next scan reads the rest from `messageCount`.
 */
function progressLedgerEntries(run: SummarizedRun): LedgerEntry[] {
  return run.plan.ledgerEntries.map((entry) => {
    const part = run.gathered.progress.get(entry.sessionId);
    return part === undefined
      ? entry
      : {
          ...entry,
          mtimeMs: -1,
          progress: { part: part.part, parts: part.parts, totalMessages: part.totalMessages },
        };
  });
}

/** A run that consolidated nothing: why (sessions waiting, or no new messages in settled sessions). */
function nothingConsolidated(ctx: RunContext, run: SummarizedRun): RunSummary {
  const { unconsolidated } = run;
  return {
    ...run.done,
    status: 'skipped',
    reason:
      unconsolidated.length > 0
        ? `nothing consolidated: ${describeWaiting(unconsolidated).join('; ')}`
        : `no new messages in settled sessions${waitingLive(run.counted.live, ctx.config.gates.quietMinutes)}`,
    durationMs: ctx.elapsed(),
  };
}

/**
 * Whether a person decides on this write first: every write in approval mode; with `approve: "shared"`, a
 * write that changes the team's file (`agentsMd`), memory files and all, so the team's block never changes
 * unreviewed.
 */
export function needsApproval(
  space: RunContext['space'],
  files: ReadonlyMap<string, string | null>,
): boolean {
  if (files.size === 0) return false;
  if (space.approve === true) return true;
  return space.approve === 'shared' && space.agentsMd !== undefined && files.has(space.agentsMd);
}

/** Approval mode: the run stages its proposal and writes nothing more. */
async function propose(
  ctx: RunContext,
  run: SummarizedRun,
  ledgerEntries: readonly LedgerEntry[],
): Promise<RunSummary> {
  const proposed = {
    ...run.done,
    status: 'proposed' as const,
    reason: [awaitingDecision(ctx.runId, ctx.space.id), ...run.notes].join('; '),
    durationMs: ctx.elapsed(),
  };
  await proposeRun(ctx.space, {
    plan: run.plan,
    memory: run.plan.memory ?? run.memory,
    summary: proposed,
    reads: [...run.earlierReads, ...run.gathered.reads],
    today: run.today,
    now: ctx.now(),
    ledgerEntries,
    segments: run.gathered.batches.flatMap(({ batch }) => batch.segments),
  });
  return endRun(ctx, proposed);
}

/** Commits memory files, quarantine, ledger and run record in one staged transaction, under the fence. */
async function commit(
  ctx: RunContext,
  locks: RunLocks,
  run: SummarizedRun,
  ledgerEntries: readonly LedgerEntry[],
): Promise<RunSummary> {
  const { space, now, config } = ctx;
  ctx.progress({ phase: 'write', done: 0, total: 1 });
  let final = { ...run.done, durationMs: ctx.elapsed() };
  const heldLock = locks.lock;
  try {
    await locks.claudeCodeLock?.confirm();
    const record = await commitMemoryChanges(space.memoryDir, {
      runId: ctx.runId,
      files: run.plan.files,
      basis: run.plan.basis,
      ledger: nextLedgerContent(run.ledger, ledgerEntries),
      runRecord: { summary: final },
      now,
      keepRuns: (config.history ?? DEFAULT_HISTORY).keepRuns,
      ...(heldLock !== undefined ? { beforeCommit: () => heldLock.assertHeld() } : {}),
      faultInjection: (step) => ctx.inject(`commit:${step}`),
    });
    locks.claudeCodeLock?.consolidated(now());
    // A file someone kept writing during the commit was deferred: the record says so, and so does the summary.
    final = { ...final, problems: record.summary.problems };
  } catch (error) {
    if (!(error instanceof LockLostError)) throw error;
    return lockLost(ctx, run, error);
  }
  ctx.progress({ phase: 'write', done: 1, total: 1 });
  return endRun(ctx, final);
}

/** Nothing was written: every session the run meant to consolidate waits, as do those it left already. */
function lockLost(ctx: RunContext, run: SummarizedRun, error: LockLostError): RunSummary {
  const lost = new Set(run.unconsolidated.map((entry) => entry.sessionId));
  return {
    ...run.done,
    status: 'lock-lost',
    reason: error.message,
    unconsolidated: [
      ...run.gathered.sessions
        .filter((sessionId) => !lost.has(sessionId))
        .map((sessionId) => ({
          sessionId,
          reason: 'lock-lost' as const,
          detail: `the run lost its lock before its commit and wrote nothing: ${error.message}`,
        })),
      ...run.unconsolidated,
    ],
    added: 0,
    updated: 0,
    superseded: 0,
    quarantined: 0,
    diff: '',
    durationMs: ctx.elapsed(),
  };
}
