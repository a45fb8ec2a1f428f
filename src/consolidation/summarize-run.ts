/**
 * The summary of a run that got through reconcile: what it would write or writes, its notes, its problems,
 * its calls and their cost, and every session it leaves waiting with why.
 */
import { roundUsd } from '../cost/index.js';
import { addUsage } from '../model/types.js';
import { describeProgress, runSummary } from '../space/index.js';
import type { RunSummary, WaitingSession } from '../core/run.js';
import { batchFactorOf, batchPendingSessions, batchRecord } from './batch/batch.js';
import { curationNotes, curationReview, curationSummary } from './curate-run.js';
import { countHeldBack } from './summary/held-back.js';
import type { ReconciledRun } from './reconcile-run.js';
import type { RunContext } from './run-context.js';
import { describeWaiting } from './run-end.js';

/** The run once its summary is made: what the write step returns, records or proposes. */
export interface SummarizedRun extends ReconciledRun {
  /** The summary of a completed (or dry) run, before the write step's outcome. */
  readonly done: RunSummary;
  /** Every session not consolidated to its end, with why. */
  readonly unconsolidated: readonly WaitingSession[];
  readonly notes: readonly string[];
}

/** Makes the run's summary from what it extracted, reconciled and plans to write. */
export function summarizeStep(ctx: RunContext, run: ReconciledRun): SummarizedRun {
  const unconsolidated = waitingSessions(ctx, run);
  const notes = runNotes(run, unconsolidated);
  const { plan, curation, extracted } = run;
  const done = runSummary({
    runId: ctx.runId,
    spaceId: ctx.space.id,
    status: ctx.request.dryRun ? 'dry-run' : 'completed',
    reason: notes.length > 0 ? notes.join('; ') : undefined,
    notes,
    sessions: run.gathered.sessions,
    added: plan.result.added.length,
    updated: plan.result.updated.length,
    superseded: plan.result.superseded.length,
    quarantined: plan.result.quarantined.length,
    ...(plan.result.quarantined.length > 0
      ? { heldBack: countHeldBack(plan.result.quarantined.map((verdict) => verdict.reason)) }
      : {}),
    factsRead: plan.factsRead,
    ...(run.stated.length > 0 ? { alreadyInProjectFiles: run.stated.length } : {}),
    ...(plan.archived.length > 0 ? { archived: plan.archived.length } : {}),
    ...(curation.calls > 0 ? { curation: curationSummary(curation, plan.merged.length) } : {}),
    ...callsOf(run),
    unconsolidated,
    ...(Object.keys(extracted.factsDropped).length > 0 ? { factsDropped: extracted.factsDropped } : {}),
    ...(ctx.stage?.kind === 'collect'
      ? { batch: batchRecord(ctx.stage.pending, extracted.batched, 'collected', batchFactorOf(ctx.config)) }
      : {}),
    ...costAndModel(ctx, run),
    diff: plan.diff,
    problems: runProblems(run),
  });
  return { ...run, done, unconsolidated, notes };
}

/**
 * Every session not consolidated to its end, with why: cut by the call budget, or its answer dropped; and,
 * beside a pending batch, the sessions left to it.
 */
function waitingSessions(ctx: RunContext, run: ReconciledRun): WaitingSession[] {
  const { gathered, extracted } = run;
  return [
    ...[...gathered.deferred, ...gathered.progress.keys()].map((sessionId) => ({
      sessionId,
      ...(extracted.waiting.get(sessionId) ?? {
        reason: 'call-budget' as const,
        detail: 'the run reached limits.maxCallsPerRun; the session continues in the next run',
      }),
    })),
    ...(ctx.stage?.kind === 'exclude' ? batchPendingSessions(ctx.stage.pending, run.scan.excluded) : []),
  ];
}

/** The run's notes: how it called the model, what waits and why, curation, stale proposals, facts left out. */
function runNotes(run: ReconciledRun, unconsolidated: readonly WaitingSession[]): string[] {
  const inProgress = [...run.gathered.progress].map(
    ([id, part]) => `${describeProgress(id, part.nextMessage, part)}; the rest follows in the next runs`,
  );
  const rejected = run.kept.length - run.candidates.length;
  return [
    ...(run.noBatchApi === undefined ? [] : [run.noBatchApi]),
    ...inProgress,
    ...describeWaiting(unconsolidated),
    ...run.extracted.notes,
    ...run.updateCheck.notes,
    ...curationNotes(run.curation),
    ...run.overBudget,
    ...(run.proposals?.dropped ?? []),
    ...(rejected > 0 ? [`${rejected} fact(s) rejected earlier from the same sessions left out`] : []),
  ];
}

/** The summary's calls, retries, tokens and tokens per call, extraction and curation together. */
function callsOf(
  run: ReconciledRun,
): Pick<
  RunSummary,
  | 'calls'
  | 'retries'
  | 'usage'
  | 'outputTokensPerCall'
  | 'callKinds'
  | 'answersAskedAgain'
  | 'factsPerUserLine'
> {
  const { extracted, curation, updateCheck } = run;
  const calls = extracted.calls + updateCheck.calls + curation.calls;
  return {
    calls,
    ...(calls > 0
      ? {
          callKinds: {
            extraction: extracted.calls,
            updateCheck: updateCheck.calls,
            curation: curation.calls,
            ...(updateCheck.carried > 0 ? { updateCheckCarried: updateCheck.carried } : {}),
          },
        }
      : {}),
    ...(extracted.answersAskedAgain > 0 ? { answersAskedAgain: extracted.answersAskedAgain } : {}),
    ...(extracted.factsPerUserLine === undefined
      ? {}
      : { factsPerUserLine: Math.round(extracted.factsPerUserLine * 1000) / 1000 }),
    retries: extracted.retries,
    usage: addUsage(addUsage(extracted.usage, updateCheck.usage), curation.usage),
    ...(extracted.perCall.length > 0
      ? { outputTokensPerCall: extracted.perCall.map((call) => call.outputTokens) }
      : {}),
  };
}

/** The summary's dollars (undefined: the model has no known price) and the model's label when it was called. */
function costAndModel(ctx: RunContext, run: ReconciledRun): Pick<RunSummary, 'costUsd' | 'model'> {
  const { extracted, curation, updateCheck } = run;
  return {
    costUsd:
      extracted.costUsd === undefined
        ? undefined
        : roundUsd(
            extracted.costUsd +
              (updateCheck.calls > 0 ? (updateCheck.costUsd ?? 0) : 0) +
              (curation.calls > 0 ? (curation.costUsd ?? 0) : 0),
          ),
    model: extracted.calls + updateCheck.calls + curation.calls > 0 ? ctx.model().label : '',
  };
}

/** The run's problems, each once: sessions set aside, memory files, curation's refusals, answers dropped. */
function runProblems(run: ReconciledRun): RunSummary['problems'] {
  const fileOf = new Map(run.gathered.records.map((record) => [record.sessionId, record.file]));
  return uniqueProblems([
    ...run.gathered.problems.map((problem) => ({ ...problem, kind: 'session' as const })),
    ...run.plan.problems.map((problem) => ({ ...problem, kind: 'memory' as const })),
    ...curationReview(run.curation).map((problem) => ({ ...problem, kind: 'memory' as const })),
    ...run.extracted.problems.map((problem) => ({
      file: fileOf.get(problem.sessionId) ?? problem.sessionId,
      reason: problem.reason,
      kind: 'session' as const,
    })),
  ]);
}

/** Each problem once: the memory folder's load and its index plan can both see one `MEMORY.md` problem. */
function uniqueProblems<T extends { readonly file: string; readonly reason: string }>(
  problems: readonly T[],
): T[] {
  const seen = new Set<string>();
  return problems.filter((problem) => {
    const key = `${problem.file}\0${problem.reason}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
