/**
 * The run's extract step: in a submitting run, the independent calls sent as a message batch (the run ends
 * there, see batch.ts); else the extraction calls (extract.ts), a collecting run's batch answers in place of
 * theirs, and how far each session got. What was sent is consolidated; a session cut by the call budget
 * continues next run from there.
 */
import { NoBatchApiError } from '../errors.js';
import type { RunSummary } from '../core/run.js';
import { submitExtractionBatch } from './batch/batch.js';
import { extractFacts, rankedMemoryList, type Extracted } from './extraction/extract.js';
import { settleProgress, type Gathered } from './gather/gather.js';
import type { GatheredRun } from './gather-run.js';
import { shownStatements } from './extraction/project-docs.js';
import type { RunContext } from './run-context.js';
import { skipped } from './run-end.js';

/** The run once the model has answered. */
export interface ExtractedRun extends GatheredRun {
  readonly extracted: Extracted;
  /** The gathered sessions settled: consolidated, in part (progress), or deferred. */
  readonly gathered: Gathered;
  /** Set when this run wanted a batch and the endpoint has no batch API: it made ordinary calls instead. */
  readonly noBatchApi: string | undefined;
}

/** What a submitting run came to: the batch sent (the run ends with `summary`), or no batch API (`note`). */
export type Submitted = { readonly summary: RunSummary } | { readonly note: string };

/**
 * Submits the run's independent calls as a message batch; undefined when there was none to send or the model
 * has no batch API (the run goes on synchronously), a note when the endpoint answered that it has none.
 */
export async function submitStep(ctx: RunContext, run: GatheredRun): Promise<Submitted | undefined> {
  const { config } = ctx;
  let note: string | undefined;
  const submitted = await submitExtractionBatch(run.planned, {
    memoryDir: ctx.space.memoryDir,
    runId: ctx.runId,
    model: ctx.model(),
    index: rankedMemoryList(run.memory.facts, ctx.now()),
    memoryTokensPerCall: config.limits.memoryTokensPerCall,
    today: run.today,
    maxOutputTokens: config.model.maxOutputTokens,
    maxAnswerChars: config.limits.maxAnswerChars,
    maxCalls: config.limits.maxCallsPerRun,
    known: shownStatements(run.projectDocs),
    now: ctx.now(),
    signal: ctx.runOptions.signal,
  }).catch((error: unknown) => {
    if (!(error instanceof NoBatchApiError)) throw error;
    note = error.message;
    return undefined;
  });
  if (submitted === undefined) return note === undefined ? undefined : { note };
  ctx.inject('after-batch-submit');
  return {
    summary: skipped(ctx, {
      reason: `submitted ${submitted.batchId} (${submitted.requests.length} request(s)); its results are collected when it ends`,
    }),
  };
}

/** Extracts the run's facts and settles how far each session got. */
export async function extractStep(
  ctx: RunContext,
  run: GatheredRun,
  noBatchApi: string | undefined,
): Promise<ExtractedRun> {
  const { config, stage } = ctx;
  const extracted = await extractFacts(run.planned, {
    known: shownStatements(run.projectDocs),
    model: ctx.model,
    index: rankedMemoryList(run.memory.facts, ctx.now()),
    memoryTokensPerCall: config.limits.memoryTokensPerCall,
    today: run.today,
    maxOutputTokens: config.model.maxOutputTokens,
    costOf: ctx.costOf,
    prepared: stage?.kind === 'collect' ? stage.answers : undefined,
    maxCalls: config.limits.maxCallsPerRun,
    concurrency: config.model.concurrency,
    limits: config.limits,
    signal: ctx.runOptions.signal,
    onProgress: ctx.progress,
  });
  ctx.inject('after-extraction');
  const startOf = new Map(run.scan.entries.map((entry) => [entry.sessionId, entry.fromMessage]));
  const gathered = settleProgress(
    run.planned,
    extracted.firstUnsent,
    (id) => run.ledger.sessions[id]?.progress,
    (id) => startOf.get(id) ?? 0,
  );
  return { ...run, extracted, gathered, noBatchApi };
}
